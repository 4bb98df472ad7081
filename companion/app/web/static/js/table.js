/* The table: set-up, then the live score screen with the actions of the player
   holding the cup. Everything shown follows the public state from /api/events. */
"use strict";

(() => {
  const { t, tn, el, api, act, toast } = EB;
  const $ = (id) => document.getElementById(id);

  let mode = "loading"; // "setup" | "board"
  let game = null; // the public state on screen
  let boardKey = null; // players + path length the paths were drawn for
  const dismissed = EB.remembered("eb_dismissed_verdicts", 60); // verdicts closed on this device, kept across reloads
  const seenCorrections = EB.remembered("eb_seen_corrections", 60);
  let table = { camera: "auto", simulate: false }; // GET /api/table
  let simDice = null;
  const challenges = new Map(); // challenge id -> [events count, challenge view]
  let confirmFor = null; // the Bluff whose dice the pickers are for
  let confirmDice = [null, null, null];
  let pendingClaim = null;
  let setupSaw = null; // the game in progress when the set-up was drawn (it offers to resume it)
  let setupAsked = 0; // the newest look at the games for the set-up: an older answer that comes in late is not drawn
  let setupLast = null; // the finished game the set-up names as the last one (a correction may let it go on)
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
      el("button", { type: "button", class: "btn btn-icon seat-up", title: t("setup_up"), "aria-label": t("setup_up"), text: "↑", onclick: (event) => { if (li.previousElementSibling) li.previousElementSibling.before(li); refreshSeats(); event.currentTarget.focus(); } }),
      el("button", { type: "button", class: "btn btn-icon seat-down", title: t("setup_down"), "aria-label": t("setup_down"), text: "↓", onclick: () => { if (li.nextElementSibling) li.nextElementSibling.after(li); refreshSeats(); } }),
      el("button", { type: "button", class: "btn btn-icon seat-remove", title: t("setup_remove"), "aria-label": t("setup_remove"), text: "✕", onclick: () => { if ($("seat-list").children.length > 2) { const near = li.nextElementSibling || li.previousElementSibling; li.remove(); refreshSeats(); EB.focusIfLost(near.querySelector(".seat-remove")); } } }),
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
      const seat = t("setup_seat", { n: i + 1 });
      li.querySelector(".seat-no").textContent = String(i + 1);
      li.querySelector(".seat-name").placeholder = seat;
      // each row's fields and buttons say whose they are: a screen reader heard "Name" and "Age" on every row
      const named = { ".seat-name": "setup_name", ".seat-age": "setup_age", ".seat-up": "setup_up", ".seat-down": "setup_down", ".seat-remove": "setup_remove" };
      Object.entries(named).forEach(([part, key]) => li.querySelector(part).setAttribute("aria-label", `${seat}: ${t(key)}`));
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
      if (names.some((n) => n.trim().toLowerCase() === "table")) return fail("setup_err_table_name"); // who corrects when no player is named (names.py TABLE)
      const length = Number($("path-length").value);
      if (!Number.isInteger(length) || length < 2 || length > 30) return fail("setup_err_path");
      const body = { players: names, path_length: length };
      if (starterMode() === "ages") {
        const ages = list.map((s) => Number(s.age));
        if (ages.some((a) => !Number.isInteger(a) || a < 1 || a > 130) || list.some((s) => s.age === "")) return fail("setup_err_ages");
        const youngest = ages.flatMap((a, i) => (a === Math.min(...ages) ? [i] : []));
        if (youngest.length > 1) { // R3: the youngest starts; of two the same age, the table says which
          document.querySelector('input[name="starter-mode"][value="pick"]').checked = true;
          $("starter-field").hidden = false;
          $("setup-form").classList.add("no-ages");
          $("starter-select").value = String(youngest[0]);
          const tied = youngest.map((i) => names[i]);
          error.textContent = t("setup_err_age_tie", { names: new Intl.ListFormat(document.documentElement.lang, { type: "conjunction" }).format(tied) });
          error.hidden = false;
          return;
        }
        body.ages = ages;
      } else {
        body.starter = Number($("starter-select").value);
      }
      if (!(await setCamera($("setup-no-camera").checked))) return; // refused (the PIN asked first): Start again
      const state = await act("POST", "/api/games", body, [$("start-game")]);
      if (state) showBoard(state);
    });
    $("resume-button").addEventListener("click", async () => {
      try { showBoard(await api("GET", "/api/games/current")); } catch (e) {
        const gone = e instanceof EB.ApiError && e.status === 404; // ended or left since, unheard (a network gap)
        toast(gone ? t("setup_resume_gone") : EB.errorText(e));
        if (gone) refreshSetup();
      }
    });
  }

  async function showSetup() {
    mode = "setup";
    $("loading").hidden = true;
    $("board").hidden = true;
    // The dice check and the verdict lie over the board, not in it: left from a game on its way out ("New game" on
    // the dice check), they covered the set-up, took its taps and kept the page from scrolling.
    // (The faces tapped so far are kept: "Resume" brings that dice check back.)
    show("act-confirm", false);
    show("verdict", false);
    clearInterval(countTimer);
    document.body.classList.remove("has-overlay");
    $("setup").hidden = false;
    // until the list answers, the game just left is the one in progress: its next move does not pull the set-up away
    if (game && game.phase !== "over") setupSaw = game.id;
    await refreshSetup({ games: [], current: null }); // unanswered, the form still works
  }

  /** The set-up's lines about the games: the one in progress (to resume) and the last one over. Kept true while the
      set-up is shown: another tablet's moves change the round, and a game that ended there is no game to resume. */
  function drawSetupGames(list) {
    const current = list.games.find((g) => g.id === list.current);
    setupSaw = list.current;
    $("setup-resume").hidden = !current;
    if (current) {
      $("setup-resume-text").textContent = t("setup_resume_text", { names: current.players.map((p) => p.name).join(", "), round: current.round });
    }
    EB.focusIfLost(current ? $("resume-button") : null, $("seat-list").querySelector(".seat-name"));
    const last = list.games.find((g) => g.phase === "over");
    setupLast = last ? last.id : null;
    $("setup-last").hidden = !last || Boolean(current);
    if (last) {
      // its end (Rematch, the evening's tally) stays one tap away after a reload or on another tablet
      $("setup-last").replaceChildren(
        t("setup_last_game", { name: EB.playerName(last, last.loser) }), " ",
        el("a", { href: "/?game=" + encodeURIComponent(last.id), id: "setup-last-open", text: t("setup_last_open") }), " · ",
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
    paths.classList.toggle("long", state.path_length > 12); // up to 30 squares fit a phone: thinner gaps, fewer numbers
    paths.classList.toggle("very-long", state.path_length > 20);
    state.players.forEach((p) => {
      const track = el("div", { class: "track" });
      track.style.setProperty("--cells", String(state.path_length + 1));
      track.append(el("span", { class: "cell cell-start", title: t("path_start") }));
      for (let i = 1; i <= state.path_length; i++) {
        const kind = i === 1 ? " cell-first" : i === state.path_length ? " cell-last" : "";
        // Past 12 squares only every fifth square and the red one are numbered, so 30 fit a phone.
        const numbered = state.path_length <= 12 || i % 5 === 0 || i === state.path_length;
        track.append(el("span", { class: "cell" + kind, text: numbered ? String(i) : "", title: String(i) }));
      }
      const elephant = el("span", { class: "elephant seat-" + p.seat, role: "img", "aria-label": t("elephant_of", { name: p.name }) });
      track.append(elephant);
      paths.append(el("div", { class: "path-row", "data-seat": p.seat },
        el("div", { class: "path-name" }, el("span", { class: "dot seat-" + p.seat }), el("span", { class: "name", text: p.name, title: p.name }), el("span", { class: "path-note" })),
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
      // a screen reader hears each elephant's square, whatever its note says (whose turn, a claim)
      elephant.setAttribute("aria-label", t("elephant_of", { name: p.name }) + ", " + t("position", { n: p.position, total: state.path_length }));
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
    $("turn-name").title = $("turn-name").textContent; // a long name, cut on a phone, in full on a long press
    document.title = $("turn-name").textContent + " · " + t("app_title");

    $("claim-amount").textContent = state.claim ? String(state.claim.amount) : "–";
    $("claim-by").textContent = state.claim ? t("claim_by", { name: name(state.claim.by) }) : t("claim_none");
    $("claim-min").textContent = state.phase === "over" || state.phase === "confirm" ? "–" : state.min_claim === null ? t("claim_min_none") : String(state.min_claim);
    $("claim-min").classList.toggle("is-text", state.min_claim === null);

    let prompt = "";
    if (state.phase === "claim") {
      prompt = state.claim === null
        ? tn("do_claim_start", "do_claim_start_plural", state.min_claim, { name: name(state.to_act), min: state.min_claim, next })
        : tn("do_claim_raise", "do_claim_raise_plural", state.min_claim, { name: name(state.to_act), min: state.min_claim, next });
    } else if (state.phase === "decide") {
      prompt = tn("do_decide", "do_decide_plural", state.claim.amount, { name: name(state.to_act), claimer: name(state.claim.by), n: state.claim.amount });
    }
    // A new round after a move: the verdict stays until someone closes it or the round goes on.
    // (The game's last move keeps the round number, so the phase is part of the key.)
    const verdictKey = state.id + ":" + state.round + ":" + state.phase;
    const verdictOn = state.last_move !== null && state.claim === null && (state.phase === "over" || state.phase === "claim") && !dismissed.has(verdictKey);

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
    show("peek-toggle", !state.eighteen); // believing 18 ends the round (R8): nothing to peek for
    drawHistory(state);
    drawCorrectionNote(state);
    show("sim-dice", table.simulate && state.phase === "decide" && table.camera !== "off");
    if (state.phase === "decide") drawSimDice(state);
    if (state.phase === "decide" && (!previous || previous.phase !== "decide" || previous.id !== state.id || previous.events !== state.events)) $("peeked").checked = false;
    show("act-confirm", state.phase === "confirm");
    if (state.phase === "confirm") drawConfirm(state);
    else { confirmFor = null; forgetPicks(); }
    show("over", state.phase === "over");
    if (state.phase === "over") {
      $("over-sub").textContent = t("over_sub", { name: name(state.loser) });
      $("over-bluffs").href = "/bluffs?game=" + encodeURIComponent(state.id);
      drawTally(state);
    }
    show("verdict", verdictOn);
    document.body.classList.toggle("has-overlay", verdictOn || state.phase === "confirm");
    if (verdictOn) drawVerdict(state, verdictKey);
    else $("verdict").dataset.key = "";
    $("claim-box").hidden = state.phase === "over" || state.phase === "confirm" || verdictOn;
    $("new-game").hidden = state.phase === "over"; // the game-over panel has its own button
    // The verdict and the dice check cover the board: Tab and a screen reader stay out of what lies under them.
    $("board").inert = verdictOn || state.phase === "confirm";
    if (!verdictOn && state.phase !== "confirm") EB.announce(state.phase === "over" ? $("turn-name").textContent + ". " + $("over-sub").textContent
      : state.eighteen ? $("prompt-18").textContent : prompt);
    EB.focusIfLost(...nextControls(state, verdictOn));
    return true;
  }

  /** Where a keyboard player goes next when what they pressed is gone: the thing the new state asks for. */
  function nextControls(state, verdictOn) {
    if (verdictOn) return [$("verdict-close")];
    if (state.phase === "confirm") return [$("confirm-title")];
    if (state.phase === "claim") return [$("claim-grid").querySelector("button"), $("turn-name")];
    if (state.phase === "decide") return [$("believe"), $("turn-name")];
    if (state.phase === "over") return [$("over-rematch"), $("over-bluffs")];
    return [];
  }

  /** This round's and the last round's claims, believes and peeks, newest first (no die, R13). */
  function drawHistory(state) {
    const items = (state.history || []).filter((h) => h.round === state.round || (state.claim === null && h.round === state.round - 1));
    const name = (seat) => EB.playerName(state, seat);
    const words = (h) => {
      if (h.type === "claim") return t("hist_claim", { name: name(h.seat), n: h.amount });
      if (h.type === "believe") return t(h.peeked ? "hist_believe_peeked" : "hist_believe", { name: name(h.seat), n: h.amount });
      return t("hist_bluff", { name: name(h.seat), n: h.amount });
    };
    $("history-box").hidden = items.length === 0 || state.phase === "over";
    $("claims-history").replaceChildren(...items.slice().reverse().map((h) => el("li", { class: "hist-" + h.type, text: words(h) })));
  }

  /** A correction is announced on every screen, once per device; after game over it says whether the game is open again. */
  function drawCorrectionNote(state) {
    const c = state.last_correction;
    const box = $("prompt-correction");
    if (!c) { box.hidden = true; return; }
    const key = state.id + ":" + c.event;
    if (seenCorrections.has(key) && box.dataset.key !== key) { box.hidden = true; return; }
    box.dataset.key = key;
    const who = c.by === "table" ? t("the_table") : c.by;
    let text = t("correction_note", { by: who });
    if (c.by === "table") text = text.charAt(0).toLocaleUpperCase(document.documentElement.lang) + text.slice(1); // "the table" opens it
    if (c.reopened) text += " " + t("correction_reopened");
    else if (c.after_game_over) text += " " + t("correction_after_over");
    box.replaceChildren(text, " ", el("a", { href: "/bluffs/" + encodeURIComponent(c.challenge), text: t("verdict_replay") }),
      el("button", { type: "button", class: "btn btn-small note-close", text: t("ok"), onclick: () => { seenCorrections.add(key); box.hidden = true; } }));
    box.hidden = false;
  }

  /** Simulation only: the dice the simulated table will show at the Bluff, tapped like real ones. */
  function drawSimDice(state) {
    const holder = $("sim-pickers");
    if (holder.dataset.for === state.id + ":" + state.events) return;
    holder.dataset.for = state.id + ":" + state.events;
    $("sim-done").textContent = "";
    Dice.pickers(holder, [], null, (dice, complete) => { simDice = complete ? dice : null; $("sim-set").disabled = !complete; });
  }

  async function sendSimDice() {
    if (!simDice) return;
    const done = await act("POST", "/api/sim/dice", { values: simDice }, [$("sim-set")]);
    if (done) $("sim-done").textContent = t("sim_done", { dice: done.values.join(" + ") });
  }

  async function drawTally(state) {
    let evening;
    try { evening = await api("GET", `/api/games/${encodeURIComponent(state.id)}/evening`); } catch (e) { return; }
    if (!game || game.id !== state.id) return;
    const games = evening.games.filter((g) => g.phase === "over").length;
    $("tally").replaceChildren(...evening.tally.slice().sort((a, b) => b.lost - a.lost).map((row) =>
      el("li", {}, el("span", { class: "name", text: row.name, title: row.name }), el("strong", { text: tn("tally_lost", "tally_lost_plural", row.lost, { n: row.lost }) }))));
    $("tally").dataset.games = String(games);
    $("tally").setAttribute("aria-label", tn("tally_games", "tally_games_plural", games, { n: games }));
  }

  /** Whether the table now reads the dice as the box says (true), or the change was refused (false). */
  async function setCamera(off) {
    const want = off ? "off" : "auto";
    if (table.camera === want) return true;
    const answer = await act("POST", "/api/table", { camera: want }, [$("no-camera"), $("setup-no-camera")]);
    if (answer) table = answer;
    $("no-camera").checked = table.camera === "off"; // the board's box shows the table's setting
    if (answer) $("setup-no-camera").checked = table.camera === "off"; // the set-up's keeps the choice until Start sends it
    return Boolean(answer);
  }

  function syncCamera() {
    $("no-camera").checked = $("setup-no-camera").checked = table.camera === "off";
  }

  async function loadTable() {
    try { table = await api("GET", "/api/table"); } catch (e) { /* the default: the camera reads the dice */ }
    syncCamera();
    if (game && mode === "board") render(game);
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
    pendingClaim = { game: game.id, amount, events: game.events };
    const holder = EB.playerName(game, game.to_act);
    const next = EB.playerName(game, (game.to_act + 1) % game.players.length);
    $("pass-amount").textContent = String(amount);
    $("pass-body").textContent = tn("pass_body", "pass_body_plural", amount, { name: holder, n: amount, next });
    $("pass-ok").textContent = t("pass_ok", { next });
    $("pass-dialog").showModal();
  }

  async function sendClaim() {
    const claim = pendingClaim;
    if (!claim) return;
    const state = await act("POST", `/api/games/${encodeURIComponent(claim.game)}/claim`, { amount: claim.amount, events: claim.events }, [$("pass-ok"), $("pass-back"), ...$("claim-grid").querySelectorAll("button")]);
    $("pass-dialog").close();
    pendingClaim = null;
    if (state && render(state)) toast(t("cup_passed", { next: EB.playerName(state, state.to_act) }));
    else if (!state) resync();
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
    // The last Bluff's cards, its dice chosen and its button on, must not stay while this Bluff's are fetched: a tap
    // there would be lost, and "These are the dice" would send the last Bluff's dice for this one (R14).
    $("confirm-pickers").replaceChildren();
    $("confirm-frame").replaceChildren();
    $("confirm-photo").hidden = true;
    $("confirm-problem").textContent = "";
    $("confirm-reason").textContent = "";
    $("confirm-total").textContent = "";
    $("confirm-button").disabled = true;
    confirmDice = [null, null, null];
    let challenge;
    try { challenge = await getChallenge(cid, state.events); } catch (e) {
      // the cards and the button would stay empty until the next state: asked again while this Bluff waits
      toast(EB.errorText(e)); confirmFor = null;
      setTimeout(() => { if (game && game.phase === "confirm" && game.last_challenge === cid && confirmFor === null) drawConfirm(game); }, 2000);
      return;
    }
    if (confirmFor !== cid) return;
    const typed = !challenge.reading; // no camera, or it gave nothing: the table types the dice
    $("confirm-title").textContent = t(typed ? "confirm_title_typed" : "confirm_title");
    const who = { claimer: EB.playerName(state, challenge.claimer), caller: EB.playerName(state, challenge.caller), n: challenge.claim };
    // no reading at all: no camera is "not sure"; the reason line below says why there is none
    $("confirm-problem").textContent = typed ? t("confirm_problem_typed", who) : t("confirm_problem", who);
    $("confirm-top").textContent = Dice.playedWithoutCamera(challenge) ? t("confirm_top_help_typed") : t("confirm_top_help");
    $("confirm-reason").textContent = !typed ? Dice.reasonText(challenge.reading)
      : Dice.playedWithoutCamera(challenge) ? t("typed_no_camera") : [t("typed_no_reading"), Dice.problemText(challenge)].join(" ").trim();
    $("confirm-photo").hidden = !challenge.has_images;
    EB.announce([$("confirm-title").textContent, $("confirm-problem").textContent, $("confirm-top").textContent].join(" "));
    const onChange = (dice, complete) => { confirmDice = dice; keepPicks(cid, dice); $("confirm-button").disabled = !complete; };
    // The photo's crops come when it has loaded: the cards are drawn again with them, keeping what the table tapped
    // meanwhile, and never for a Bluff the page has left (a photo that loads late).
    const withCrops = (image) => { if (confirmFor === cid) Dice.confirmCards($("confirm-pickers"), challenge, image, $("confirm-total"), onChange, confirmDice); };
    const img = Dice.frame($("confirm-frame"), challenge, { numbers: true, noDrawn: true, onLoad: withCrops });
    Dice.confirmCards($("confirm-pickers"), challenge, img && img.naturalWidth ? img : null, $("confirm-total"), onChange, keptPicks(cid));
  }

  /* The faces the table tapped on a Bluff's dice check, kept for this tab (sessionStorage) until it is confirmed: a
     phone that reloads (woken from sleep, the page pulled down) had lost them and the table tapped them all again. */
  const picksKey = (cid) => "eb-picks-" + cid;
  function keepPicks(cid, dice) {
    try {
      if (dice.some((v) => v !== null)) window.sessionStorage.setItem(picksKey(cid), JSON.stringify(dice));
      else window.sessionStorage.removeItem(picksKey(cid));
    } catch (e) { /* private mode: kept in this page only */ }
  }
  function keptPicks(cid) {
    try {
      const dice = JSON.parse(window.sessionStorage.getItem(picksKey(cid)) || "null");
      return Array.isArray(dice) ? dice : null;
    } catch (e) { return null; }
  }
  /** Forget every Bluff's kept faces once no dice check is on screen (a Bluff confirmed, here or on another tablet,
      never comes back to its dice check). */
  function forgetPicks() {
    try {
      for (const key of Object.keys(window.sessionStorage)) if (key.startsWith(picksKey(""))) window.sessionStorage.removeItem(key);
    } catch (e) { /* nothing kept */ }
  }

  /** The dice the table tapped, sent; where refused, the table asked for again and the refusal said (the page busy
      until then). */
  function sendConfirm() { return EB.busyWhile(sendConfirmNow()); }

  async function sendConfirmNow() {
    if (!game || confirmDice.some((v) => v === null)) return;
    const cid = game.last_challenge;
    const sent = confirmDice.slice();
    let movedOn = false;
    const state = await act("POST", `/api/games/${encodeURIComponent(game.id)}/confirm`, { dice: confirmDice, events: game.events },
      [$("confirm-button"), ...$("confirm-pickers").querySelectorAll("button")], { moved_on: () => { movedOn = true; } });
    if (state) { render(state); return; }
    await resync();
    if (movedOn) confirmLost(cid, sent); // said over the verdict now drawn (a verdict drawn fresh clears the toasts before it)
  }

  /** A confirmation refused because the game moved on: most often another tablet confirmed this Bluff's dice first,
      and the verdict now shown is decided by its dice. Said with those dice where they are not the ones typed here
      (correcting the Bluff mends a wrong one, R15); nothing where both tablets typed the same faces. */
  async function confirmLost(cid, sent) {
    try {
      const challenge = await api("GET", "/api/challenges/" + encodeURIComponent(cid));
      if (challenge.status === "decided" && Array.isArray(challenge.dice)) {
        const same = (a) => a.slice().sort().join();
        if (same(challenge.dice) !== same(sent)) toast(t("err_confirmed_elsewhere", { dice: challenge.dice.join(" + ") }));
        return;
      }
    } catch (e) { /* said as any move the game moved on from */ }
    toast(t("err_moved_on"));
  }

  /** The total counted up from 0 to the real one, against the claim: the table watches it arrive. */
  let countTimer = null;
  function countUp(node, total) {
    clearInterval(countTimer);
    if (window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches) { node.textContent = String(total); return; }
    let shown = 0;
    node.textContent = "0";
    countTimer = setInterval(() => {
      shown += 1;
      node.textContent = String(Math.min(shown, total));
      if (shown >= total) clearInterval(countTimer);
    }, Math.max(30, Math.round(1200 / Math.max(total, 1))));
  }

  /** An optional sound at the reveal (off unless the table switches it on on this device). */
  const sound = {
    has: () => { try { return window.localStorage.getItem("eb_sound") === "on"; } catch (e) { return false; } },
    set: (on) => { try { if (on) window.localStorage.setItem("eb_sound", "on"); else window.localStorage.removeItem("eb_sound"); } catch (e) { /* ignore */ } },
  };
  function syncSound() {
    const on = sound.has();
    $("sound-toggle").setAttribute("aria-pressed", String(on));
    $("sound-toggle").textContent = t(on ? "sound_on" : "sound");
  }
  function playReveal(held) {
    if (!sound.has()) return;
    try {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      const ctx = new Ctx();
      (held ? [523, 659, 784] : [392, 330, 262]).forEach((f, i) => {
        const osc = ctx.createOscillator(), gain = ctx.createGain();
        osc.frequency.value = f;
        gain.gain.setValueAtTime(0.2, ctx.currentTime + i * 0.18);
        gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + i * 0.18 + 0.17);
        osc.connect(gain).connect(ctx.destination);
        osc.start(ctx.currentTime + i * 0.18);
        osc.stop(ctx.currentTime + i * 0.18 + 0.18);
      });
    } catch (e) { /* no sound on this device */ }
  }

  async function drawVerdict(state, key) {
    const move = state.last_move;
    const fresh = $("verdict").dataset.key !== key;
    if (fresh) EB.hideToast(); // "the cup is with …" is over once the verdict is in
    const name = (seat) => EB.playerName(state, seat);
    const verdict = $("verdict");
    verdict.dataset.key = key;
    $("verdict-close").textContent = t(state.phase === "over" ? "verdict_see_result" : "verdict_continue");
    $("verdict-next").textContent = state.phase === "claim" ? t("verdict_next", { name: name(state.to_act), n: state.round }) : t("over_title", { name: name(state.loser) });
    verdict.classList.toggle("reveal-18", !move.challenge);
    if (!move.challenge) {
      // R8: the receiver believed 18 and moves one step: no dice are counted.
      $("verdict-title").textContent = t("believed_18_title");
      $("verdict-dice").replaceChildren();
      $("verdict-dice-label").hidden = true;
      $("verdict-frame").replaceChildren();
      $("verdict-camera").hidden = true;
      $("verdict-held").textContent = t("believed_18", { name: name(move.seat) });
      $("verdict-move").textContent = t("moves_one", { name: name(move.seat) });
      $("verdict-replay").hidden = true;
      announceVerdict();
      return;
    }
    let challenge;
    try { challenge = await getChallenge(move.challenge, state.events); } catch (e) {
      toast(EB.errorText(e));
      setTimeout(() => { if ($("verdict").dataset.key === key && game) drawVerdict(game, key); }, 2000); // not left blank
      return;
    }
    if (verdict.dataset.key !== key) return;
    const names = state.players.map((p) => p.name);
    $("verdict-title").textContent = t("verdict_title", { caller: names[challenge.caller], claimer: names[challenge.claimer] });
    const drawn = challenge.id + ":" + state.events;
    if ($("verdict-frame").dataset.challenge !== drawn) {
      $("verdict-frame").dataset.challenge = drawn;
      // What the game counts: the three top faces, large, as they lie on top of the real dice.
      $("verdict-dice-label").hidden = false;
      $("verdict-dice").replaceChildren(...Dice.agreedDice(challenge).map((v) => Dice.face(v, "die-huge")));
      $("verdict-camera").hidden = !challenge.has_images;
      Dice.frame($("verdict-frame"), challenge, { noDrawn: true });
      $("verdict-agreed").textContent = Dice.agreedText(challenge, document.documentElement.lang);
      Dice.showVerdict("verdict", challenge, names);
      if (fresh) { countUp($("verdict-total"), challenge.total); playReveal(challenge.verdict && challenge.verdict.claim_held); }
    }
    $("verdict-replay").hidden = false;
    $("verdict-replay").href = "/bluffs/" + encodeURIComponent(challenge.id);
    announceVerdict();
  }

  /** The verdict in the status line: who called, what the dice made against the claim, who moves, who is next. */
  function announceVerdict() {
    EB.announce(["verdict-title", "verdict-held", "verdict-move", "verdict-next"].map((id) => $(id) ? $(id).textContent.trim() : "")
      .filter(Boolean).join(". "));
  }

  /* ----- live ----- */

  /** The table as the server has it now: after a move refused (another tablet moved first, a network gap left this
      screen behind, the game was left for a newer one), after the live stream came back, and every minute. A device
      that missed a new game's start stayed on the old game for good, its badge "Live". The page is busy until it is
      drawn (``EB.busyWhile``). */
  function resync() { return EB.busyWhile(resyncNow()); }

  async function resyncNow() {
    if (mode === "loading") return;
    try {
      const list = await api("GET", "/api/games");
      const current = list.games.find((g) => g.id === list.current);
      // the set-up is left only for a game started since it was drawn, as a live game's first move does (onLive); the
      // last game, let go on by a correction while this screen heard nothing, is offered to resume instead
      if (mode === "setup") {
        if (current && current.id !== setupSaw && current.id !== setupLast) showBoard(current); else drawSetupGames(list);
        return;
      }
      if (current && (!game || current.id !== game.id || current.events > game.events)) showBoard(current);
      else if (!current && game && mode === "board") render(await api("GET", "/api/games/" + encodeURIComponent(game.id)));
    } catch (e) { /* the live badge says when the companion cannot be reached */ }
  }

  function onLive(state) {
    checkHealthSoon();
    if (mode === "board" && game && state.id !== game.id && state.events > 1) return; // another game's move
    if (mode === "setup") {
      // Only a game started since the set-up was drawn pulls it away (the stream sends the game in progress again
      // when it comes back, and a game with no move yet has one event too). Any other game's move redraws the
      // set-up's lines: the round of the game it offers to resume, that game's end, or a finished game that a
      // correction on another tablet let go on, offered to resume (the minute's look pulled the set-up away to it).
      if (state.id === setupSaw || state.events !== 1) { refreshSetup(); return; }
    }
    if (state.last_correction && state.last_correction.event === state.events) challenges.clear(); // re-read the corrected Bluff
    if (mode === "loading") return;
    showBoard(state);
  }

  /** A camera, buttons or reader part that failed: say so, in the page's language where it has words for it. Asked
      at the start, after each move the live stream brings (a Bluff's photo may not have been saved, the camera may
      have stopped answering or come back) and every minute (a set-up mended on another tablet), at most every 2 s. */
  let healthDue = null;
  function checkHealthSoon() {
    if (healthDue === null) healthDue = setTimeout(() => { healthDue = null; checkHealth(); }, 2000);
  }

  /** Of health's ``checks``, those the table should hear of during a game too: a card nearly full (the next Bluffs'
      photos will not be saved) and an unset clock (the log's times are wrong). A lid off or a button pressed is what
      playing does, and stays on the set-up page's check. */
  const TABLE_CHECKS = ["disk_full", "clock_unset"];

  async function checkHealth() {
    try {
      const health = await api("GET", "/api/health");
      const details = (health.problem_details || (health.problems || []).map((sentence) => ({ sentence })))
        .concat((health.checks || []).filter((f) => TABLE_CHECKS.includes(f.code)));
      $("health").hidden = details.length === 0;
      $("health-problems").replaceChildren(...details.map((d) => el("li", { text: EB.findingText(d, true) })));
    } catch (e) { /* the live badge already says when the companion cannot be reached */ }
  }

  /** The set-up's lines about the games, looked at again; a failed look draws ``unanswered``, or (null) leaves them as
      they were: the live badge says when the companion cannot be reached. */
  async function refreshSetup(unanswered = null) {
    if (mode !== "setup") return;
    const asked = ++setupAsked;
    let list = unanswered;
    try { list = await api("GET", "/api/games"); } catch (e) { /* as said above */ }
    if (list && asked === setupAsked && mode === "setup") drawSetupGames(list);
  }

  /** The page's start: the page is busy (``EB.busyWhile``) until the table, its health and the game are drawn. */
  async function start() {
    setupForm();
    EB.busyWhile(checkHealth());
    setInterval(() => { checkHealthSoon(); resync(); }, 60000);
    EB.busyWhile(loadTable());
    $("pass-back").addEventListener("click", () => { pendingClaim = null; $("pass-dialog").close(); });
    $("pass-ok").addEventListener("click", sendClaim);
    const decideButtons = () => [$("believe"), $("bluff"), $("peeked")];
    $("believe").addEventListener("click", async () => {
      const state = await act("POST", `/api/games/${encodeURIComponent(game.id)}/believe`, { peeked: !game.eighteen && $("peeked").checked, events: game.events }, decideButtons());
      if (state) render(state); else resync();
    });
    $("bluff").addEventListener("click", async () => {
      const data = await act("POST", `/api/games/${encodeURIComponent(game.id)}/bluff`, { events: game.events }, decideButtons());
      if (data) render(data.state); else resync();
    });
    $("sim-set").addEventListener("click", sendSimDice);
    $("no-camera").addEventListener("change", () => setCamera($("no-camera").checked));
    $("sound-toggle").addEventListener("click", () => { sound.set(!sound.has()); syncSound(); });
    syncSound();
    $("over-rematch").addEventListener("click", async () => {
      // two tablets tapping Rematch together: the second finds the rematch made, says nothing and shows it
      const state = await act("POST", `/api/games/${encodeURIComponent(game.id)}/rematch`, {}, [$("over-rematch"), $("over-new")], { rematched: () => {} });
      if (state) showBoard(state); else resync();
    });
    $("confirm-button").addEventListener("click", sendConfirm);
    EB.arrowKeys($("claim-grid"), "button");
    EB.arrowKeys($("confirm-pickers"), ".pick", ".pick-row");
    EB.arrowKeys($("sim-pickers"), ".pick", ".pick-row");
    $("verdict-close").addEventListener("click", () => { clearInterval(countTimer); dismissed.add($("verdict").dataset.key); render(game); });
    const askNew = () => $("new-dialog").showModal();
    $("new-game").addEventListener("click", askNew);
    $("confirm-new-game").addEventListener("click", askNew);
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
      table: (view) => { table = { ...table, ...view }; syncCamera(); if (game && mode === "board") render(game); },
    }, resync);
  }

  document.addEventListener("DOMContentLoaded", () => EB.busyWhile(start()));
})();
