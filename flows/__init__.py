"""Prefect flows and the stages they run (the DAG and its I/O; logic lives in extractors/validators)."""
