"""The CI mode: a review of one pull (merge) request by URL, run by a CI job with a token
instead of the App, through the same flows, with the index kept in the CI's cache."""
