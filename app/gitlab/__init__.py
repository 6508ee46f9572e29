"""GitLab (gitlab.com or self-managed) as a code host: its REST API v4 behind the forge
protocol (``app/forge``), its webhooks' intake rules, and its doctor checks."""
