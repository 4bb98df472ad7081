"""The tablet page's routes: the table (set-up and score screen), the disputed
rolls, one Bluff's replay, and the rules, each served in the player's language.

The pages hold the fixed texts; the scripts under ``static/js/`` fill in the
live game from the JSON API and ``/api/events``. Everything is local (the Pi
may be its own hotspot) and there is no inline script or style (the CSP).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, render_template, request
from flask_babel import gettext, ngettext

from companion.app.web import i18n

bp = Blueprint("pages", __name__)

#: the rules page's sections: (heading key, [text keys]) in RULES.md order
RULE_SECTIONS: list[tuple[str, list[str]]] = [
    ("rules_h_goal", ["rules_goal"]),
    ("rules_h_setup", ["rules_r1", "rules_r2", "rules_r3"]),
    ("rules_h_round", ["rules_r4", "rules_r5"]),
    ("rules_h_believe", ["rules_r6", "rules_r7", "rules_r8"]),
    ("rules_h_bluff", ["rules_r9", "rules_r10"]),
    ("rules_h_after", ["rules_r11", "rules_r12"]),
    ("rules_h_referee", ["rules_r13", "rules_r14", "rules_r15"]),
]


@bp.record_once
def _babel(state: Any) -> None:
    i18n.init_app(state.app)


def _render(template: str, screen: str, **context: Any) -> str:
    lang = i18n.pick_language(request)

    def t(key: str, **params: Any) -> str:
        return i18n.fill(gettext(key), params)

    def tn(key: str, key_plural: str, n: int, **params: Any) -> str:
        return i18n.fill(ngettext(key, key_plural, n), {"n": n, **params})

    return render_template(
        template,
        lang=lang,
        languages=i18n.LANGUAGES,
        strings=i18n.strings(lang),
        t=t,
        tn=tn,
        screen=screen,
        **context,
    )


@bp.get("/")
def table():  # noqa: ANN201
    """Set-up when no game is in progress, else the score screen, live."""
    return _render("table.html", "table")


@bp.get("/bluffs")
def bluffs():  # noqa: ANN201
    """Every Bluff of a game (``?game=``; else the game in progress or the latest)."""
    return _render("bluffs.html", "bluffs")


@bp.get("/bluffs/<challenge_id>")
def bluff(challenge_id: str):  # noqa: ANN201
    """One Bluff replayed: the frame, each die, the verdict, corrections (R15)."""
    if not challenge_id.startswith("c-") or len(challenge_id) > 80:
        abort(404)
    return _render("bluff.html", "bluff", challenge_id=challenge_id)


@bp.get("/rules")
def rules():  # noqa: ANN201
    return _render("rules.html", "rules", sections=RULE_SECTIONS)


@bp.get("/sessions")
def sessions():  # noqa: ANN201
    """The devices let in by the table PIN, each ended with a tap, and the wrong PINs of the last hour (docs/SECURITY.md)."""
    return _render("sessions.html", "sessions")
