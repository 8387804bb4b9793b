"""Layout-step scripts split into single statements exactly where a ``;`` ends one.

``setup()`` sends a step statement by statement (a connection in pipeline mode
refuses a script), so the split must never cut inside quoted text, a quoted
name, a comment or a dollar-quoted function body.
"""

from __future__ import annotations

import pytest

from langgraph_durable.migrations.postgres import layout_steps, split_statements


def test_semicolons_inside_quotes_comments_and_bodies_do_not_split() -> None:
    script = """
    SELECT 'a;b', 'it''s; fine';
    SELECT "odd;name" FROM t;
    -- a comment; with a semicolon
    SELECT E'escaped \\'; quote';
    /* outer ; /* nested ; */ still comment ; */ SELECT 1;
    CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; SELECT 2 $$;
    CREATE FUNCTION g() RETURNS int LANGUAGE sql AS $body$ SELECT $$;$$ $body$;
    SELECT $1
    """
    assert split_statements(script) == (
        "SELECT 'a;b', 'it''s; fine'",
        'SELECT "odd;name" FROM t',
        "-- a comment; with a semicolon\n    SELECT E'escaped \\'; quote'",
        "/* outer ; /* nested ; */ still comment ; */ SELECT 1",
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; SELECT 2 $$",
        "CREATE FUNCTION g() RETURNS int LANGUAGE sql AS $body$ SELECT $$;$$ $body$",
        "SELECT $1",
    )


def test_blank_and_comment_only_pieces_are_left_out() -> None:
    assert split_statements("  ;; -- only a comment\n ; /* and this */ ;") == ()
    assert split_statements("SELECT 1;\n-- trailing comment\n") == ("SELECT 1",)


@pytest.mark.parametrize(
    ("script", "what"),
    [
        ("SELECT 'open", "unclosed quote"),
        ('SELECT "open', "unclosed quote"),
        ("SELECT $$ body", "unclosed dollar quote"),
        ("SELECT 1 /* open /* nested */", "unclosed comment"),
    ],
)
def test_an_unclosed_quote_or_comment_is_refused(script: str, what: str) -> None:
    with pytest.raises(ValueError, match=what):
        split_statements(script)


def test_every_shipped_step_splits_into_statements_that_each_hold_code() -> None:
    for step in layout_steps():
        statements = step.statements
        assert statements, step.name
        for statement in statements:
            assert not statement.endswith(";"), (step.name, statement)
        # what the split keeps is the script, less separators and blanks
        assert _squeezed("".join(statements)) == _squeezed(step.sql), step.name


def _squeezed(sql: str) -> str:
    return "".join(sql.replace(";", "").split())
