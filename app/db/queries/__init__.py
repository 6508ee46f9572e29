"""Named queries, one module per table or concern; routes and flows call these
functions rather than writing SQL of their own."""


def where(*conditions: tuple[bool, str]) -> str:
    """``WHERE`` with the SQL of each condition whose flag is true, joined by ``AND``.

    Optional filters are left out of the statement rather than written as ``:p IS NULL
    OR ...``, which a generic plan cannot use an index for.
    """
    return "WHERE " + (" AND ".join(sql for used, sql in conditions if used) or "TRUE")
