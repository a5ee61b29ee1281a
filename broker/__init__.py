"""recall: a federated evidence-search broker."""

__version__ = "0.1.0"
