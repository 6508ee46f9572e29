"""The workflows that jobs and the CLI run, each from start to finish: review a pull
request (``review``), index or purge a repository (``index``), answer a question
(``conversation``), learn from a closed PR (``feedback``). They reach the code host
through ``app/forge`` (its records and protocol; ``Runtime.host`` implements it), never
a host's own module, and call the review, retrieval, diff, indexing and db layers;
nothing below imports them. ``setup`` and ``doctor`` make and check the GitHub App
itself, and are the two allowed to import ``app.github``."""
