"""Test helpers shared by test modules: servers, senders, waiters, seeded data. A test
module imports from here, never from another test module."""
