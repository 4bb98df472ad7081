/* Disputed rolls: every Bluff of a game, with its photo, claim, total and verdict (R15). */
"use strict";

(() => {
  const { t, el, api, toast } = EB;
  const $ = (id) => document.getElementById(id);

  function gameLabel(g) {
    const names = g.players.map((p) => p.name).join(", ");
    return g.phase === "over" ? t("game_over_label", { names, name: EB.playerName(g, g.loser) }) : t("game_live_label", { names, n: g.round });
  }

  /** The top faces that counted, drawn; the camera's photo (bottom faces) small beside them. */
  function thumb(c) {
    const values = Dice.agreedDice(c);
    return el("span", { class: "thumb-cell" },
      values.length ? Dice.row(values, "die-small") : el("span", { class: "hint", text: t("source_waiting") }),
      c.has_images ? el("img", { class: "thumb", src: c.image_url, alt: t("frame_alt"), loading: "lazy" }) : null);
  }

  /** A disputed roll: the reader was unsure (the table typed the dice) or someone corrected it. */
  const disputed = (c) => c.source === "table" || c.status === "awaiting_confirm" || c.corrections.length > 0;
  let lastGame = null;
  let lastDrawn = null; // what the list shows now (``show``)

  async function show(gameId) {
    let game, list;
    try {
      [game, list] = await Promise.all([
        api("GET", "/api/games/" + encodeURIComponent(gameId)),
        api("GET", "/api/games/" + encodeURIComponent(gameId) + "/challenges"),
      ]);
    } catch (e) { toast(EB.errorText(e)); return; }
    const names = game.players.map((p) => p.name);
    lastGame = gameId;
    const only = $("only-disputed").checked;
    // the live stream's first state (and any move that did not change a Bluff) draws the same list again: kept as it
    // is, so a row in view, a focused button or a tap on it is not replaced under the player
    const drawn = JSON.stringify([gameId, only, names, list.challenges]);
    if (drawn === lastDrawn) return;
    lastDrawn = drawn;
    const rows = list.challenges.filter((c) => !only || disputed(c)).map((c) => {
      const words = Dice.verdict(c, names);
      const link = "/bluffs/" + encodeURIComponent(c.id);
      return el("tr", { "data-challenge": c.id, class: disputed(c) ? "is-disputed" : "" },
        el("td", {}, el("a", { href: link, "aria-label": t("bluffs_open") }, thumb(c))),
        el("td", { class: "num", text: String(c.round), "data-label": t("bluffs_round") }),
        el("td", { text: t("bluff_who", { claimer: names[c.claimer], caller: names[c.caller] }) }),
        el("td", { class: "num big", text: String(c.claim), "data-label": t("verdict_claim") }),
        el("td", { class: "num big", text: c.total === null ? "?" : String(c.total), "data-label": t("verdict_total") }),
        el("td", {}, words ? el("span", { text: words.move }) : el("span", { class: "hint", text: t("source_waiting") }),
          c.corrections.length ? el("span", { class: "badge", text: t("bluffs_corrected", { n: c.corrections.length }) })
            : c.source === "table" ? el("span", { class: "badge badge-typed", text: t("bluffs_typed") }) : null),
        el("td", {}, el("a", { class: "btn btn-small", href: link, text: t("bluffs_open") })));
    });
    $("bluff-rows").replaceChildren(...rows);
    $("bluff-table").hidden = rows.length === 0;
    $("bluffs-empty").hidden = rows.length !== 0;
    $("bluffs-empty").textContent = t(only && list.challenges.length ? "bluffs_none_disputed" : "bluffs_none");
  }

  async function start() {
    let data = { games: [], current: null };
    try { data = await api("GET", "/api/games"); } catch (e) { toast(EB.errorText(e)); }
    const select = $("game-select");
    select.replaceChildren(...data.games.map((g) => el("option", { value: g.id, text: gameLabel(g) })));
    const wanted = new URLSearchParams(window.location.search).get("game");
    const chosen = data.games.some((g) => g.id === wanted) ? wanted : data.current || (data.games[0] && data.games[0].id);
    $("only-disputed").addEventListener("change", () => { if (lastGame) show(lastGame); });
    select.addEventListener("change", () => {
      const url = new URL(window.location.href);
      url.searchParams.set("game", select.value);
      window.history.replaceState(null, "", url.toString());
      show(select.value);
    });
    if (chosen) {
      select.value = chosen;
      await show(chosen);
    } else {
      $("bluffs-empty").textContent = t("bluffs_no_games");
      $("bluffs-empty").hidden = false;
    }
    // A Bluff called while this list is open appears by itself, and the games' list follows the table (a first game
    // started on a list that had none is chosen: a list has one game chosen whenever it has any).
    EB.live("/api/events" + (chosen ? "?game=" + encodeURIComponent(chosen) : ""), (state) => {
      listGame(state);
      if (state.id === select.value) show(state.id);
    });
  }

  /** The games' list as the live stream tells it: a game's round, or its end, as it is now, and a game started since
      the page opened, at the top (newest first, as ``GET /api/games`` lists them). A list drawn at the start named a
      game that had ended "round 3" for good, and had no line for the next one. */
  function listGame(state) {
    const select = $("game-select");
    const option = [...select.options].find((o) => o.value === state.id);
    if (option) option.textContent = gameLabel(state);
    else if (state.events === 1) select.prepend(el("option", { value: state.id, text: gameLabel(state) }));
  }

  document.addEventListener("DOMContentLoaded", () => EB.busyWhile(start())); // busy until drawn (body[data-busy])
})();
