"""The FastAPI application: routes are thin adapters over the modules they call."""
