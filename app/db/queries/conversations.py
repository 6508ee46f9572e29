"""The ``conversations`` table: each question to the bot on a PR and how it ended
(``answering``, ``answered``, ``skipped``, ``limited``)."""

from __future__ import annotations

from sqlalchemy import Connection, text


def conversation_status(conn: Connection, repo_id: int, kind: str, question_id: int) -> str | None:
    found = conn.execute(
        text(
            "SELECT status FROM conversations"
            " WHERE repository_id = :r AND kind = :k AND question_id = :q"
        ),
        {"r": repo_id, "k": kind, "q": question_id},
    ).scalar()
    return str(found) if found is not None else None


def questions_last_hour(conn: Connection, repo_id: int, pr_number: int) -> tuple[int, int]:
    """(questions taken, questions turned away as over the limit) on the PR in the last
    hour."""
    counts: dict[bool, int] = dict(
        conn.execute(
            text(
                "SELECT status = 'limited', count(*) FROM conversations"
                " WHERE repository_id = :r AND pr_number = :p"
                " AND created_at > now() - interval '1 hour' GROUP BY 1"
            ),
            {"r": repo_id, "p": pr_number},
        ).all()
    )
    return counts.get(False, 0), counts.get(True, 0)


def start_conversation(
    conn: Connection, repo_id: int, pr_number: int, kind: str, question_id: int, status: str
) -> None:
    conn.execute(
        text(
            "INSERT INTO conversations (repository_id, pr_number, kind, question_id, status)"
            " VALUES (:r, :p, :k, :q, :s)"
        ),
        {"r": repo_id, "p": pr_number, "k": kind, "q": question_id, "s": status},
    )


def finish_conversation(
    conn: Connection, repo_id: int, kind: str, question_id: int, status: str, answer_id: int | None
) -> None:
    conn.execute(
        text(
            "UPDATE conversations SET status = :s, answer_id = coalesce(:a, answer_id)"
            " WHERE repository_id = :r AND kind = :k AND question_id = :q"
        ),
        {"s": status, "a": answer_id, "r": repo_id, "k": kind, "q": question_id},
    )
