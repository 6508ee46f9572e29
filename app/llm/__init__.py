"""OpenAI-compatible model endpoints: the client, token counting, secret scrubbing."""
