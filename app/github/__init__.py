"""The GitHub App: webhook intake, the API client, posting reviews."""
