/* Shared by every screen: texts, the JSON API, the table PIN, the language switch.
   No framework, no build step: the page must work from the Pi with no internet. */
"use strict";

const EB = (() => {
  const strings = JSON.parse(document.getElementById("eb-strings").textContent);

  const has = (key) => Object.prototype.hasOwnProperty.call(strings, key);
  function fill(text, params) {
    return String(text).replace(/\{([a-z_]+)\}/g, (whole, name) =>
      params && params[name] !== undefined ? String(params[name]) : whole);
  }

  /** One text in the page's language with its {placeholders} filled. */
  function t(key, params) {
    let text = has(key) ? strings[key] : key;
    if (Array.isArray(text)) text = text[0];
    return fill(text, params);
  }

  /** A text that depends on a number ``n``: the catalog's plural form for ``n`` in this language
      (CLDR rules, from the gettext catalog: ``plural_index[n]`` is the form's index; numbers past
      the table keep their last two digits, which is all the nine languages' rules look at). */
  function tn(key, pluralKey, n, params) {
    const forms = has(key) ? strings[key] : null;
    if (Array.isArray(forms)) {
      const table = strings.__plural_index__ || [];
      const m = Math.abs(Math.trunc(n));
      const index = m < table.length ? table[m] : table[100 + (m % 100)];
      return fill(forms[index] !== undefined ? forms[index] : forms[forms.length - 1], params);
    }
    return t(n === 1 ? key : pluralKey, params);
  }

  /** Build an element: el("p", {class: "x", text: "hi"}, child, ...). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = value;
      else if (name === "class") node.className = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  class ApiError extends Error {
    constructor(status, code, message, params) { super(message); this.status = status; this.code = code; this.params = params || {}; }
  }

  /** A player-readable sentence, in the page's language, for a failed request. */
  function errorText(err) {
    if (!(err instanceof ApiError) || err.status === 0) return t("err_network"); // fetch itself failed: no answer came
    if (err.status === 401) return t("err_pin");
    if (err.status === 429 || err.code === "too_many_attempts") return t("err_locked");
    if (err.code === "disk_full") return t("err_disk_full"); // "try again" alone would fail again: room is wanted first
    if (err.code === "game_followed") return t("err_game_followed"); // a correction that would reopen a game played on from
    if (err.code === "moved_on") return t("err_moved_on"); // a tap on a screen the game had moved on from
    if (err.code === "game_left") return t("err_game_left"); // a move in a game left for a newer one
    if (err.code === "confirm_first") return t("err_confirm_first"); // a correction while another Bluff's dice wait
    if (err.code === "not_confirmed") return t("err_not_confirmed"); // a correction of dice not agreed yet
    if (err.status === 409) return t("err_not_now");
    if (err.status === 422) return t("err_refused");
    if (err.status === 404) return t("err_missing");
    return t("err_generic");
  }

  async function api(method, url, body) {
    const options = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, options);
    } catch (e) {
      throw new ApiError(0, "network", String(e));
    }
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      throw new ApiError(response.status, data && data.error, (data && data.message) || response.statusText, data && data.params);
    }
    return data;
  }

  let toastTimer = null;
  function toast(text) {
    const box = document.getElementById("toast");
    box.textContent = text;
    box.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { box.hidden = true; }, 6000);
  }

  function hideToast() {
    clearTimeout(toastTimer);
    document.getElementById("toast").hidden = true;
  }

  /* --- the table PIN: acting needs it once per device (session cookie) --- */
  let controlLearned = 0; // how many times this page has learned whether it is let in (``setControl``)

  /** Show or hide the controls: CSS keys them on body[data-control]. */
  function setControl(on) {
    controlLearned += 1;
    const was = document.body.dataset.control;
    document.body.dataset.control = on ? "yes" : "no";
    document.getElementById("pin-open").hidden = Boolean(on);
    document.getElementById("pin-lock").hidden = !on;
    // a page that draws more than the CSS shows for control (the devices list) hears when it changes
    if (was !== document.body.dataset.control) document.dispatchEvent(new CustomEvent("eb-control", { detail: { control: Boolean(on) } }));
  }

  let pinAnswered = []; // who waits on the PIN dialog: told true when the PIN let this device in, false when it closed without

  /** Open the PIN dialog (the top bar's Unlock, a page's own PIN button). */
  function openPin() {
    const dialog = document.getElementById("pin-dialog");
    if (dialog.open) return;
    document.getElementById("pin-error").hidden = true;
    document.getElementById("pin-input").value = "";
    dialog.showModal();
    document.getElementById("pin-input").focus();
  }

  /** Open the PIN dialog for a tap refused without it; the promise says whether the PIN let the device in before the
      dialog closed. */
  function askPin() {
    const answer = new Promise((resolve) => pinAnswered.push(resolve));
    openPin();
    return answer;
  }

  function answerPin(letIn) {
    const waiting = pinAnswered;
    pinAnswered = [];
    waiting.forEach((resolve) => resolve(letIn));
  }

  function setupPin() {
    const dialog = document.getElementById("pin-dialog");
    document.getElementById("pin-open").addEventListener("click", openPin);
    document.querySelectorAll("[data-pin-open]").forEach((button) => button.addEventListener("click", openPin));
    document.getElementById("pin-cancel").addEventListener("click", () => dialog.close());
    // closed without the PIN (Cancel, Escape); not a close that comes after the dialog was opened again for a later tap
    dialog.addEventListener("close", () => { if (!dialog.open) answerPin(false); });
    document.getElementById("pin-lock").addEventListener("click", async () => {
      try { await api("DELETE", "/api/session"); setControl(false); focusIfLost(document.getElementById("pin-open")); } catch (e) { toast(errorText(e)); }
    });
    document.getElementById("pin-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const error = document.getElementById("pin-error");
      const pin = document.getElementById("pin-input").value.trim();
      if (!pin) return;
      try {
        await api("POST", "/api/session", { pin });
        const taps = pinAnswered.length > 0;
        answerPin(true); // a move refused for want of the PIN is sent again
        dialog.close();
        setControl(true);
        // the dialog gave the focus back to the Unlock button, now hidden; after a tap the PIN was asked for, the tap's
        // own answer places it (never "Lock this device", which the next Enter would press mid-game)
        if (!taps) focusIfLost(document.getElementById("pin-lock"));
      } catch (e) {
        // a full card: no PIN is checked until there is room (a wrong one could not be counted), so say that, not "saved"
        error.textContent = e instanceof ApiError && e.code === "disk_full" ? t("pin_disk_full") : errorText(e);
        error.hidden = false;
        document.getElementById("pin-input").select();
      }
    });
    busyWhile(askSession().then((s) => { if (s) setControl(s.control); }, () => setControl(false)));
  }

  /** This device's session as the server has it (``GET /api/session``, the page busy meanwhile), or null where the
      page learned whether it is let in while the question was on its way (a PIN typed, the device locked, another
      answer): that answer, asked before, is stale, and "not let in" as asked before a PIN would hide the controls
      again. An error likewise, unless stale. */
  function askSession() {
    const asked = controlLearned;
    return busyWhile(api("GET", "/api/session").then(
      (status) => (controlLearned === asked ? status : null),
      (e) => { if (controlLearned === asked) throw e; return null; }));
  }

  /* --- the page is busy (``body[data-busy]``) while a player's action is sent (``act``), and while what follows from
     its answer is done or the page loads what it shows (``busyWhile``: asking the table again after a refusal and
     what is said then, the table page's start). A check that nothing more happens (the browser tests') waits until
     the mark is gone. --- */
  const inFlight = new Set();
  let chores = 0;
  function markBusy() { document.body.dataset.busy = "yes"; }
  function unmarkBusy() { if (inFlight.size === 0 && chores === 0) delete document.body.dataset.busy; }

  /** ``work`` (a promise) keeps the page marked busy until it settles; its value. */
  async function busyWhile(work) {
    chores += 1;
    markBusy();
    try {
      return await work;
    } finally {
      chores -= 1;
      unmarkBusy();
    }
  }

  /** Send a player's action; its answer, or null when refused: said in a toast, but for the error codes ``refused``
      maps to handlers of its own ({rematched: fn}), which say it, or not, as they know best. While its request is in
      flight ``buttons`` are disabled and the same request is not sent again (a double tap on Bluff sends one Bluff,
      not a second one refused with a 409). A missing PIN opens the PIN dialog. */
  async function act(method, url, body, buttons, refused) {
    const key = method + " " + url;
    if (inFlight.has(key)) return null;
    inFlight.add(key);
    const disabled = (buttons || []).filter((b) => b && !b.disabled);
    disabled.forEach((b) => { b.disabled = true; b.setAttribute("aria-busy", "true"); });
    markBusy();
    let tapAgain = false; // the tap not sent again: the button (where still shown) goes back under a keyboard player's hand
    try {
      try {
        return await api(method, url, body);
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 401)) throw e;
        // This device's session ended (revoked on /sessions, or expired). Once the PIN lets the device in again, a
        // move is sent again as it was: it says the state it was made on (``events``), so one the game has moved on
        // from while the PIN was typed is refused (moved_on), never played on another turn. Anything else (a new
        // game, a rematch, a correction) could undo what another device did meanwhile: the player taps it again.
        setControl(false);
        const letIn = await askPin();
        if (!letIn || !(body && Number.isInteger(body.events))) { tapAgain = true; return null; }
        return await api(method, url, body);
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) { setControl(false); openPin(); } else if (e instanceof ApiError && refused && Object.prototype.hasOwnProperty.call(refused, e.code)) refused[e.code](e); else toast(errorText(e));
      return null;
    } finally {
      inFlight.delete(key);
      disabled.forEach((b) => { b.disabled = false; b.removeAttribute("aria-busy"); });
      unmarkBusy();
      if (tapAgain) focusIfLost(...disabled);
    }
  }

  /** A small list kept on this device (localStorage), e.g. the verdicts closed here. */
  function remembered(name, limit) {
    let items = [];
    try { items = JSON.parse(window.localStorage.getItem(name) || "[]"); } catch (e) { items = []; }
    if (!Array.isArray(items)) items = [];
    return {
      has: (item) => items.includes(item),
      add: (item) => {
        if (items.includes(item)) return;
        items.push(item);
        items = items.slice(-(limit || 100));
        try { window.localStorage.setItem(name, JSON.stringify(items)); } catch (e) { /* private mode: kept for this page only */ }
      },
    };
  }

  /* --- the language switch, remembered in a cookie for a year. A mouse or a finger picks from the open list and
     the page changes at once; the arrow keys on the closed menu only move through the languages, and Enter (or
     leaving the menu) changes it: the first arrow key reloaded the page, in the next language, focus lost (WCAG
     3.2.2). --- */
  function setupLanguage() {
    const select = document.getElementById("lang-select");
    const shown = select.value;
    let browsedAt = -Infinity; // when an arrow key last moved the closed menu
    const go = () => {
      if (select.value === shown) return;
      document.cookie = `eb_lang=${encodeURIComponent(select.value)}; path=/; max-age=31536000; SameSite=Lax`;
      const url = new URL(window.location.href);
      url.searchParams.delete("lang");
      window.location.replace(url.toString());
    };
    select.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); go(); } else if (!event.altKey) browsedAt = event.timeStamp;
    });
    select.addEventListener("change", (event) => { if (event.timeStamp - browsedAt > 300) go(); });
    select.addEventListener("blur", go);
  }

  /* --- a keyboard player's place on the page. A page moves the focus to the next thing to do when the button
     pressed has gone (hidden by the state it brought), and says what happened in a polite status line
     (``#announce``, base.html) for a screen reader: the score screen changes without a page load. Focus moves only
     for a player on the keyboard: on a tablet's touch screen a ring on a button nobody pressed means nothing. --- */
  let byKeyboard = false;
  document.addEventListener("keydown", (event) => { if (!event.ctrlKey && !event.metaKey) byKeyboard = true; }, true);
  document.addEventListener("pointerdown", () => { byKeyboard = false; }, true);

  function focusLost() {
    const now = document.activeElement;
    // a button disabled under the focus (busy while its request flies, or nothing left to send) is lost too: Chrome
    // moves the focus off it to the page's top only at its next rendering, so a check made before that saw it kept
    return !now || now === document.body || now.disabled === true || now.getClientRects().length === 0 || now.closest("[hidden], [inert]") !== null;
  }

  /** Focus the first of ``candidates`` on screen, where a keyboard player's focus was lost with what they pressed. */
  function focusIfLost(...candidates) {
    if (!byKeyboard || !focusLost()) return;
    const target = candidates.find((node) => node && node.getClientRects().length > 0 && !node.closest("[hidden], [inert]"));
    if (target) target.focus();
  }

  /** Arrow keys between the buttons of ``container`` that match ``items`` (a claim grid, the faces of a dice
      check): Left and Right to the one beside, Home and End to the first and last; Up and Down to the same place in
      the row above or below (with ``rows``, the same face of the next die; without, a line of the grid as drawn). Tab still stops at
      each; the arrows spare a keyboard player up to 15 Tabs across a grid. Delegated, so a redrawn grid keeps them. */
  function arrowKeys(container, items, rows) {
    if (!container) return;
    const usable = (node) => node && !node.disabled && node.getClientRects().length > 0;
    container.addEventListener("keydown", (event) => {
      const here = event.target.closest ? event.target.closest(items) : null;
      if (!here || !container.contains(here) || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      const row = rows ? here.closest(rows) : container;
      const line = [...row.querySelectorAll(items)];
      const i = line.indexOf(here);
      const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: 1, ArrowUp: -1 }[event.key];
      let target = null;
      if (event.key === "Home") target = line.find(usable);
      else if (event.key === "End") target = line.slice().reverse().find(usable);
      else if (step === undefined) return;
      else if (rows && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
        const all = [...container.querySelectorAll(rows)];
        const other = all[all.indexOf(row) + step];
        target = other ? [...other.querySelectorAll(items)][i] : null;
      } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        // a grid without rows of its own (the claim grid): a row is as many buttons as the first line holds on screen
        const top = line[0].getBoundingClientRect().top;
        const across = Math.max(1, line.filter((b) => Math.abs(b.getBoundingClientRect().top - top) < 2).length);
        target = line[i + step * across] || null;
      } else {
        for (let j = i + step; j >= 0 && j < line.length && !target; j += step) if (usable(line[j])) target = line[j];
      }
      event.preventDefault();
      if (usable(target)) target.focus();
    });
  }

  /** Say ``text`` in the page's polite status line, once (the same words again are not repeated). */
  function announce(text) {
    const line = document.getElementById("announce");
    if (line && text && line.textContent !== text) line.textContent = text;
  }

  /* --- the live stream: EventSource retries by itself; a closed one is reopened.
     ``onOther`` maps other event names to handlers: {warning: fn}. --- */
  function live(url, onState, onOther, onReconnect) {
    const badge = document.getElementById("live");
    badge.hidden = false;
    let source = null;
    let reopen = null;
    let lost = false; // the stream broke since it last opened: states may have been missed
    function show(state) {
      badge.dataset.state = state;
      badge.textContent = t(state === "on" ? "live_on" : "live_reconnecting");
    }
    function open() {
      source = new EventSource(url);
      source.addEventListener("open", () => {
        show("on");
        // the states sent while it was away are not sent again: ``onReconnect`` asks for the table as it is now
        if (lost && onReconnect) onReconnect();
        lost = false;
      });
      source.addEventListener("state", (event) => { show("on"); onState(JSON.parse(event.data)); });
      // Side notes beside the states, e.g. "warning" from the table's lid check.
      for (const [kind, fn] of Object.entries(onOther || {})) source.addEventListener(kind, (event) => fn(JSON.parse(event.data)));
      source.addEventListener("error", () => {
        show("off");
        lost = true;
        if (source.readyState === EventSource.CLOSED && reopen === null) {
          reopen = setTimeout(() => { reopen = null; open(); }, 3000);
        }
      });
    }
    window.addEventListener("pagehide", () => source && source.close());
    open();
  }

  function playerName(state, seat) {
    const p = state && state.players && state.players[seat];
    return p ? p.name : "?";
  }

  /** The overlays (the reveal, the uncertain reading) start below the top bar, and the score board fills the screen
      under it (its columns scroll, never the page), whatever its height. */
  function measureTopbar() {
    const bar = document.querySelector(".topbar");
    if (bar) document.documentElement.style.setProperty("--topbar", bar.getBoundingClientRect().height + "px");
  }

  /* --- what is wrong with the table, in the page's language --- */

  /** Why a capture gave no reading or no photo (a Bluff's ``problem_codes``: the camera, the dice not still, the
      reader, the disk), by code and params; ``english`` (the server's sentence) when a code is unknown here or there
      are none (a Bluff saved before the codes, a dice source's own sentence); "" when there was no problem. */
  const PROBLEM_TEXTS = {
    played_without_camera: () => t("problem_played_without_camera"),
    camera_stuck: () => t("problem_camera_stuck"),
    camera_timeout: (p) => t("problem_camera_timeout", p),
    camera_failed: (p) => t("problem_camera_failed", p),
    dice_not_still: (p) => t("problem_dice_not_still", p),
    reader_failed: (p) => t("problem_reader_failed", p),
    photo_unsaved: (p) => t("problem_photo_unsaved", p),
  };

  function captureProblemText(codes, english) {
    const list = Array.isArray(codes) ? codes : [];
    const known = list.length > 0 && list.every((p) => p && Object.prototype.hasOwnProperty.call(PROBLEM_TEXTS, p.code));
    return known ? list.map((p) => PROBLEM_TEXTS[p.code](p)).join(" ") : english || "";
  }

  /** Where on the picture a glare lies, by the check's thirds of it (the server's ``vertical`` and ``horizontal``). */
  const WHERE = {
    top_left: () => t("check_where_top_left"), top_centre: () => t("check_where_top_centre"), top_right: () => t("check_where_top_right"),
    middle_left: () => t("check_where_middle_left"), middle_centre: () => t("check_where_middle_centre"), middle_right: () => t("check_where_middle_right"),
    bottom_left: () => t("check_where_bottom_left"), bottom_centre: () => t("check_where_bottom_centre"), bottom_right: () => t("check_where_bottom_right"),
  };

  /** The table's buttons by their input's name, as a finding about one names it. */
  const INPUTS = { believe: () => t("check_input_believe"), bluff: () => t("check_input_bluff"), confirm: () => t("check_input_confirm") };

  /** The reader's parts a problem is about (the server's ``reader_part``). */
  const READER_PARTS = {
    region: () => t("cam_err_region_small"),
    empty_tray: () => t("check_reader_empty_tray"),
    model: (p) => t("check_reader_model", p),
    taught_model: (p) => t("check_reader_taught_model", p),
  };

  /** What the check before a game (``findings``) or /api/health (``problem_details``) says is wrong, by its code and
      params: the server's sentence is English; one the page has no words for is shown as the server says it. */
  const FINDINGS = {
    camera_busy: (p) => t("check_camera_busy", p),
    no_camera: (p) => t("check_no_camera", p),
    camera_library: (p) => t("check_camera_library", p),
    log_unwritable: (p) => t("health_log_unwritable", p),
    camera_silent: (p) => t("check_camera_silent", p),
    no_reading: (p) => t("health_no_reading", { detail: captureProblemText(p.codes, p.detail) }),
    no_buttons: (p) => t("health_no_buttons", p),
    photos_unsaved: (p) => t("health_photos_unsaved", p),
    bad_frame: (p) => t("check_bad_frame", p),
    tray_dark: (p) => t("check_tray_dark", p),
    tray_bright: (p) => t("check_tray_bright", p),
    tray_glare: (p) => WHERE[p.vertical + "_" + p.horizontal] && t("check_tray_glare", { where: WHERE[p.vertical + "_" + p.horizontal]() }),
    calibration: (p) => p.frame && t("cam_hint_calibration", { frame: p.frame }),
    lens: () => t("cam_hint_lens"),
    lid_off: (p) => t("check_lid_off", p),
    button_stuck: (p) => INPUTS[p.input] && t("check_button_stuck", { button: INPUTS[p.input](), pin: p.pin }),
    disk_full: (p) => t("check_disk_full", p),
    clock_unset: (p) => t("check_clock_unset", p),
    reader: (p) => READER_PARTS[p.reader_part] ? READER_PARTS[p.reader_part](p) : p.reader_part && t("check_reader_check", p),
  };

  /** The same said on another page than the set-up page, where that page's words would point "below". */
  const AWAY = {
    calibration: (p) => p.frame && t("health_calibration", { frame: p.frame }),
    reader: (p) => p.reader_part === "empty_tray" ? t("health_reader_empty_tray") : p.reader_part === "region" ? t("health_region_small") : null,
  };

  /** One thing wrong, in the page's language where the page has words for it; ``away``: said off the set-up page. */
  function findingText(f, away) {
    const p = f.params || {};
    const said = (away === true && AWAY[f.code] && AWAY[f.code](p)) || (FINDINGS[f.code] ? FINDINGS[f.code](p) : null);
    return said || f.sentence;
  }

  document.addEventListener("DOMContentLoaded", () => {
    setupPin(); setupLanguage(); measureTopbar();
    window.addEventListener("resize", measureTopbar);
    if (window.ResizeObserver) new ResizeObserver(measureTopbar).observe(document.querySelector(".topbar"));
  });

  return { t, tn, el, api, act, busyWhile, askSession, remembered, ApiError, errorText, toast, hideToast, live, playerName, findingText, captureProblemText, focusIfLost, announce, setControl, arrowKeys };
})();
