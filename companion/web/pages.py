"""The tablet page (placeholder until the page is built: see the page's issue)."""

from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("pages", __name__)


@bp.get("/")
def index():  # noqa: ANN201
    return render_template("index.html")
