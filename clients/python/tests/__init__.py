"""Tests of the docindex Python client: against a real server, and against local stand-ins."""
