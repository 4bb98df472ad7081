/* The table: set-up, then the live score screen with the actions of the player
   holding the cup. Everything shown follows the public state from /api/events. */
"use strict";

(() => {
  const { t, el, api, act, toast } = EB;
  const $ = (id) => document.getElementById(id);

  let mode = "loading"; // "setup" | "board"
  let game = null; // the public state on screen
  let boardKey = null; // players + path length the paths were drawn for
  const dismissed = new Set(); // verdicts closed on this device: "<game>:<round>"
  const challenges = new Map(); // challenge id -> [events count, challenge view]
  let confirmFor = null; // the Bluff whose dice the pickers are for
  let confirmDice = [null, null, null];
  let pendingClaim = null;
  let warning = null; // the table's lid check (R6): {game, round, seat, rule}, or null

  /* ----- set-up ----- */

  function seatRow(name, age) {
    const li = el("li", { class: "seat" });
    const nameInput = el("input", { type: "text", class: "seat-name", maxlength: "30", autocomplete: "off", value: name || "", "aria-label": t("setup_name") });
    const ageInput = el("input", { type: "number", class: "seat-age", min: "1", max: "130", inputmode: "numeric", value: age || "", "aria-label": t("setup_age"), placeholder: t("setup_age") });
    nameInput.addEventListener("input", refreshSeats);
    li.append(
      el("span", { class: "seat-no" }),
      nameInput,
      ageInput,
      el("button", { type: "button", class: "btn btn-icon seat-up", title: t("setup_up"), "aria-label": t("setup_up"), text: "↑", onclick: () => { if (li.previousElementSibling) li.previousElementSibling.before(li); refreshSeats(); } }),
      el("button", { type: "button", class: "btn btn-icon seat-down", title: t("setup_down"), "aria-label": t("setup_down"), text: "↓", onclick: () => { if (li.nextElementSibling) li.nextElementSibling.after(li); refreshSeats(); } }),
      el("button", { type: "button", class: "btn btn-icon seat-remove", title: t("setup_remove"), "aria-label": t("setup_remove"), text: "✕", onclick: () => { if ($("seat-list").children.length > 2) { li.remove(); refreshSeats(); } } }),
    );
    return li;
  }

  function seats() {
    return [...$("seat-list").children].map((li) => ({
      name: li.querySelector(".seat-name").value.trim(),
      age: li.querySelector(".seat-age").value.trim(),
    }));
  }

  function refreshSeats() {
    const list = $("seat-list");
    [...list.children].forEach((li, i) => {
      li.querySelector(".seat-no").textContent = String(i + 1);
      li.querySelector(".seat-name").placeholder = t("setup_seat", { n: i + 1 });
    });
    $("add-player").disabled = list.children.length >= 10;
    const select = $("starter-select");
    const keep = select.value;
    select.replaceChildren(...seats().map((s, i) => el("option", { value: String(i), text: s.name || t("setup_seat", { n: i + 1 }) })));
    if (keep && Number(keep) < select.options.length) select.value = keep;
  }

  function starterMode() {
    return document.querySelector('input[name="starter-mode"]:checked').value;
  }

  function setupForm() {
    for (let i = 0; i < 3; i++) $("seat-list").append(seatRow());
    refreshSeats();
    $("add-player").addEventListener("click", () => {
      if ($("seat-list").children.length < 10) { $("seat-list").append(seatRow()); refreshSeats(); }
    });
    document.querySelectorAll('input[name="starter-mode"]').forEach((r) => r.addEventListener("change", () => {
      const pick = starterMode() === "pick";
      $("starter-field").hidden = !pick;
      $("setup-form").classList.toggle("no-ages", pick);
    }));
    $("setup-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const error = $("setup-error");
      error.hidden = true;
      const list = seats();
      const names = list.map((s) => s.name);
      const fail = (key) => { error.textContent = t(key); error.hidden = false; };
      if (names.length < 2 || names.length > 10) return fail("setup_err_count");
      if (names.some((n) => !n) || new Set(names.map((n) => n.toLowerCase())).size !== names.length) return fail("setup_err_names");
      const length = Number($("path-length").value);
      if (!Number.isInteger(length) || length < 2 || length > 30) return fail("setup_err_path");
      const body = { players: names, path_length: length };
      if (starterMode() === "ages") {
        const ages = list.map((s) => Number(s.age));
        if (ages.some((a) => !Number.isInteger(a) || a < 1 || a > 130) || list.some((s) => s.age === "")) return fail("setup_err_ages");
        body.ages = ages;
      } else {
        body.starter = Number($("starter-select").value);
      }
      const state = await act("POST", "/api/games", body);
      if (state) showBoard(state);
    });
    $("resume-button").addEventListener("click", async () => {
      try { showBoard(await api("GET", "/api/games/current")); } catch (e) { toast(EB.errorText(e)); }
    });
  }

  async function showSetup() {
    mode = "setup";
    $("loading").hidden = true;
    $("board").hidden = true;
    $("setup").hidden = false;
    let list = { games: [], current: null };
    try { list = await api("GET", "/api/games"); } catch (e) { /* the form still works */ }
    const current = list.games.find((g) => g.id === list.current);
    $("setup-resume").hidden = !current;
    if (current) {
      $("setup-resume-text").textContent = t("setup_resume_text", { names: current.players.map((p) => p.name).join(", "), round: current.round });
    }
    const last = list.games.find((g) => g.phase === "over");
    $("setup-last").hidden = !last || Boolean(current);
    if (last) {
      $("setup-last").replaceChildren(
        t("setup_last_game", { name: EB.playerName(last, last.loser) }), " ",
        el("a", { href: "/bluffs?game=" + encodeURIComponent(last.id), text: t("nav_bluffs") }));
    }
  }

  /* ----- the score screen ----- */

  function showBoard(state) {
    mode = "board";
    $("loading").hidden = true;
    $("setup").hidden = true;
    $("board").hidden = false;
    render(state);
  }

  function drawPaths(state) {
    const key = state.id + "|" + state.path_length + "|" + state.players.map((p) => p.name).join("|");
    if (key === boardKey) return;
    boardKey = key;
    const paths = $("paths");
    paths.replaceChildren();
    paths.classList.toggle("many", state.players.length > 6); // up to 10 players still fit a tablet
    state.players.forEach((p) => {
      const track = el("div", { class: "track" });
      track.style.setProperty("--cells", String(state.path_length + 1));
      track.append(el("span", { class: "cell cell-start", title: t("path_start") }));
      for (let i = 1; i <= state.path_length; i++) {
        const kind = i === 1 ? " cell-first" : i === state.path_length ? " cell-last" : "";
        track.append(el("span", { class: "cell" + kind, text: String(i) }));
      }
      const elephant = el("span", { class: "elephant seat-" + p.seat, role: "img", "aria-label": t("elephant_of", { name: p.name }) });
      track.append(elephant);
      paths.append(el("div", { class: "path-row", "data-seat": p.seat },
        el("div", { class: "path-name" }, el("span", { class: "dot seat-" + p.seat }), el("span", { class: "name", text: p.name }), el("span", { class: "path-note" })),
        track));
    });
  }

  function placeElephants(state) {
    const cells = state.path_length + 1;
    state.players.forEach((p) => {
      const row = $("paths").querySelector(`.path-row[data-seat="${p.seat}"]`);
      const elephant = row.querySelector(".elephant");
      const before = elephant.dataset.position;
      elephant.style.left = (100 * p.position / cells) + "%";
      elephant.style.width = (100 / cells) + "%";
      elephant.dataset.position = String(p.position);
      if (before !== undefined && Number(before) !== p.position) {
        row.classList.remove("just-moved");
        void row.offsetWidth; // restart the animation
        row.classList.add("just-moved");
      }
      row.classList.toggle("is-turn", state.to_act === p.seat);
      row.classList.toggle("is-loser", state.loser === p.seat);
      const note = row.querySelector(".path-note");
      let text = t("position", { n: p.position, total: state.path_length });
      if (state.to_act === p.seat) text = state.phase === "claim" ? t("note_holds_cup") : t("note_decides");
      else if (state.claim && state.claim.by === p.seat) text = t("note_claimed", { n: state.claim.amount });
      if (state.loser === p.seat) text = t("note_loser");
      note.textContent = text;
    });
  }

  function show(id, on) { $(id).hidden = !on; }

  /** Show ``state``; an older state of the same game (a late reply) is ignored. Returns whether shown. */
  function render(state) {
    if (game && state.id === game.id && state.events < game.events) return false;
    const previous = game;
    game = state;
    drawPaths(state);
    placeElephants(state);
    const name = (seat) => EB.playerName(state, seat);
    const next = state.to_act !== null ? name((state.to_act + 1) % state.players.length) : "";

    $("round").textContent = t("round", { n: state.round });
    const turn = $("turn");
    turn.className = "turn" + (state.to_act !== null ? "" : state.phase === "over" ? " turn-over" : " turn-table");
    // The player's own colour (their dot and elephant) next to their name.
    $("turn-dot").hidden = state.to_act === null;
    $("turn-dot").className = "turn-dot" + (state.to_act !== null ? " seat-" + state.to_act : "");
    $("turn-name").textContent =
      state.phase === "over" ? t("over_title", { name: name(state.loser) })
      : state.phase === "confirm" ? t("turn_table")
      : t("whose_turn", { name: name(state.to_act) });
    document.title = $("turn-name").textContent + " · " + t("app_title");

    $("claim-amount").textContent = state.claim ? String(state.claim.amount) : "–";
    $("claim-by").textContent = state.claim ? t("claim_by", { name: name(state.claim.by) }) : t("claim_none");
    $("claim-min").textContent = state.phase === "over" || state.phase === "confirm" ? "–" : state.min_claim === null ? t("claim_min_none") : String(state.min_claim);
    $("claim-min").classList.toggle("is-text", state.min_claim === null);

    let prompt = "";
    if (state.phase === "claim") {
      prompt = state.claim === null
        ? t("do_claim_start", { name: name(state.to_act), min: state.min_claim, next })
        : t("do_claim_raise", { name: name(state.to_act), min: state.min_claim, next });
    } else if (state.phase === "decide") {
      prompt = t("do_decide", { name: name(state.to_act), claimer: name(state.claim.by), n: state.claim.amount });
    }
    // A new round after a move: the verdict stays until someone closes it or the round goes on.
    // (The game's last move keeps the round number, so the phase is part of the key.)
    const verdictKey = state.id + ":" + state.round + ":" + state.phase;
    const verdictOn = state.last_move !== null && state.claim === null && (state.phase === "over" || (state.phase === "claim" && !dismissed.has(verdictKey)));

    $("prompt").textContent = prompt;
    $("prompt").hidden = !prompt || verdictOn || state.eighteen;
    show("prompt-18", state.eighteen);
    if (state.eighteen) $("prompt-18").textContent = t("do_decide_18", { name: name(state.to_act), claimer: name(state.claim.by) });
    const peekNote = state.phase === "claim" && state.peeked && state.claim !== null && !verdictOn;
    show("prompt-peek", peekNote);
    if (peekNote) $("prompt-peek").textContent = t("peek_reminder", { name: name(state.to_act) });

    // The lid check names a seat and a rule, never a value (R13); it concerns this claim only.
    const warn = warning && warning.game === state.id && warning.round === state.round && state.phase === "decide";
    show("prompt-warning", warn);
    if (warn) $("prompt-warning").textContent = t("peek_warning", { name: name(warning.seat) });

    show("act-claim", state.phase === "claim" && !verdictOn);
    if (state.phase === "claim") drawClaims(state);
    show("act-decide", state.phase === "decide");
    if (state.phase === "decide" && (!previous || previous.phase !== "decide" || previous.id !== state.id || previous.events !== state.events)) $("peeked").checked = false;
    show("act-confirm", state.phase === "confirm");
    if (state.phase === "confirm") drawConfirm(state);
    else confirmFor = null;
    show("over", state.phase === "over");
    if (state.phase === "over") {
      $("over-sub").textContent = t("over_sub", { name: name(state.loser) });
      $("over-bluffs").href = "/bluffs?game=" + encodeURIComponent(state.id);
    }
    show("verdict", verdictOn);
    if (verdictOn) drawVerdict(state, verdictKey);
    $("claim-box").hidden = state.phase === "over" || state.phase === "confirm" || verdictOn;
    $("new-game").hidden = state.phase === "over"; // the game-over panel has its own button
    return true;
  }

  function drawClaims(state) {
    const grid = $("claim-grid");
    const low = state.min_claim;
    if (grid.dataset.low === String(low) && grid.dataset.game === state.id) return;
    grid.dataset.low = String(low);
    grid.dataset.game = state.id;
    grid.replaceChildren();
    for (let n = low; n <= 18; n++) {
      grid.append(el("button", { type: "button", class: "btn claim-option" + (n === 18 ? " claim-18" : ""), "data-amount": n, text: String(n), onclick: () => askPass(n) }));
    }
  }

  function askPass(amount) {
    if (!game || game.phase !== "claim") return;
    pendingClaim = { game: game.id, amount };
    const holder = EB.playerName(game, game.to_act);
    const next = EB.playerName(game, (game.to_act + 1) % game.players.length);
    $("pass-amount").textContent = String(amount);
    $("pass-body").textContent = t("pass_body", { name: holder, n: amount, next });
    $("pass-ok").textContent = t("pass_ok", { next });
    $("pass-dialog").showModal();
  }

  async function sendClaim() {
    const claim = pendingClaim;
    $("pass-dialog").close();
    pendingClaim = null;
    if (!claim) return;
    const state = await act("POST", `/api/games/${encodeURIComponent(claim.game)}/claim`, { amount: claim.amount });
    if (state && render(state)) toast(t("cup_passed", { next: EB.playerName(state, state.to_act) }));
  }

  async function getChallenge(cid, events) {
    const cached = challenges.get(cid);
    if (cached && cached[0] === events) return cached[1];
    const view = await api("GET", "/api/challenges/" + encodeURIComponent(cid));
    challenges.set(cid, [events, view]);
    return view;
  }

  async function drawConfirm(state) {
    const cid = state.last_challenge;
    if (confirmFor === cid) return;
    confirmFor = cid;
    let challenge;
    try { challenge = await getChallenge(cid, state.events); } catch (e) { toast(EB.errorText(e)); confirmFor = null; return; }
    if (confirmFor !== cid) return;
    $("confirm-problem").textContent = t("confirm_problem", { claimer: EB.playerName(state, challenge.claimer), n: challenge.claim });
    $("confirm-reason").textContent = Dice.reasonText(challenge.reading) || challenge.problem || "";
    Dice.frame($("confirm-frame"), challenge);
    Dice.pickers($("confirm-pickers"), [], $("confirm-total"), (dice, complete) => {
      confirmDice = dice;
      $("confirm-button").disabled = !complete;
    });
  }

  async function sendConfirm() {
    if (!game || confirmDice.some((v) => v === null)) return;
    const state = await act("POST", `/api/games/${encodeURIComponent(game.id)}/confirm`, { dice: confirmDice });
    if (state) render(state);
  }

  async function drawVerdict(state, key) {
    const move = state.last_move;
    if ($("verdict").dataset.key !== key) EB.hideToast(); // "the cup is with …" is over once the verdict is in
    const name = (seat) => EB.playerName(state, seat);
    const verdict = $("verdict");
    verdict.dataset.key = key;
    $("verdict-close").hidden = state.phase === "over";
    $("verdict-next").textContent = state.phase === "claim" ? t("verdict_next", { name: name(state.to_act), n: state.round }) : "";
    if (!move.challenge) {
      // R8: the receiver believed 18 and moves one step.
      $("verdict-title").textContent = t("believed_18_title");
      $("verdict-frame").replaceChildren();
      $("verdict-claim").textContent = "18";
      $("verdict-total").textContent = "–";
      $("verdict-sign").textContent = "";
      $("verdict-held").textContent = t("believed_18", { name: name(move.seat) });
      $("verdict-move").textContent = t("moves_one", { name: name(move.seat) }) + " (R8)";
      $("verdict-replay").hidden = true;
      return;
    }
    let challenge;
    try { challenge = await getChallenge(move.challenge, state.events); } catch (e) { toast(EB.errorText(e)); return; }
    if (verdict.dataset.key !== key) return;
    const names = state.players.map((p) => p.name);
    $("verdict-title").textContent = t("verdict_title", { caller: names[challenge.caller], claimer: names[challenge.claimer] });
    if ($("verdict-frame").dataset.challenge !== challenge.id + ":" + state.events) {
      $("verdict-frame").dataset.challenge = challenge.id + ":" + state.events;
      Dice.frame($("verdict-frame"), challenge);
    }
    Dice.showVerdict("verdict", challenge, names);
    $("verdict-replay").hidden = false;
    $("verdict-replay").href = "/bluffs/" + encodeURIComponent(challenge.id);
  }

  /* ----- live ----- */

  function onLive(state) {
    if (mode === "board" && game && state.id !== game.id && state.events > 1) return; // another game's move
    if (mode === "setup" && state.events !== 1) return; // only a game just started pulls the set-up away
    if (mode === "loading") return;
    showBoard(state);
  }

  /** A camera or buttons that failed at start-up: say so, with the companion's own words. */
  async function checkHealth() {
    try {
      const health = await api("GET", "/api/health");
      $("health").hidden = health.status === "ok";
      $("health-problems").textContent = (health.problems || []).join(" ");
    } catch (e) { /* the live badge already says when the companion cannot be reached */ }
  }

  async function start() {
    setupForm();
    checkHealth();
    $("pass-back").addEventListener("click", () => { pendingClaim = null; $("pass-dialog").close(); });
    $("pass-ok").addEventListener("click", sendClaim);
    $("believe").addEventListener("click", async () => {
      const state = await act("POST", `/api/games/${encodeURIComponent(game.id)}/believe`, { peeked: $("peeked").checked });
      if (state) render(state);
    });
    $("bluff").addEventListener("click", async () => {
      const data = await act("POST", `/api/games/${encodeURIComponent(game.id)}/bluff`, {});
      if (data) render(data.state);
    });
    $("confirm-button").addEventListener("click", sendConfirm);
    $("verdict-close").addEventListener("click", () => { dismissed.add($("verdict").dataset.key); render(game); });
    const askNew = () => $("new-dialog").showModal();
    $("new-game").addEventListener("click", askNew);
    $("over-new").addEventListener("click", () => showSetup());
    $("new-back").addEventListener("click", () => $("new-dialog").close());
    $("new-ok").addEventListener("click", () => { $("new-dialog").close(); showSetup(); });

    const wanted = new URLSearchParams(window.location.search).get("game");
    let first = null;
    try {
      if (wanted) first = await api("GET", "/api/games/" + encodeURIComponent(wanted));
      else {
        const list = await api("GET", "/api/games"); // not /current: no 404 in the console when none is in progress
        first = list.games.find((g) => g.id === list.current) || null;
      }
    } catch (e) {
      if (!(e instanceof EB.ApiError && e.status === 404)) toast(EB.errorText(e));
    }
    if (first) showBoard(first); else await showSetup();
    EB.live("/api/events" + (first ? "?game=" + encodeURIComponent(first.id) : ""), onLive, {
      warning: (note) => { warning = note; if (game && mode === "board") render(game); },
    });
  }

  document.addEventListener("DOMContentLoaded", start);
})();
