"""The operator's dashboard under ``/admin``: server-rendered pages (Jinja2, plain HTML
and CSS, no script) over the project's query layer and procrastinate's job manager,
behind a sign-in with the admin token."""
