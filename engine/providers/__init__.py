"""Context providers, in linnkit's priority order (spec §5.2): core 1, working memory 2, checkpoint 2.5,
summarization 3."""
