"""The workflows that jobs and the CLI run, each from start to finish: review a pull
request (``review``), index or purge a repository (``index``), answer a question
(``conversation``), learn from a closed PR (``feedback``), ask GitHub again for missed
webhooks (``redelivery``). They call the GitHub client, review, retrieval, diff,
indexing and db layers; nothing below imports them."""
