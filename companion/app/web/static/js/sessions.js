/* The devices let in by the table PIN: listed, each ended with one tap; and the wrong PINs of the last hour. */
"use strict";

(() => {
  const { el, api, toast, errorText } = EB;
  const $ = (id) => document.getElementById(id);
  const when = (iso) => new Date(iso).toLocaleString(document.documentElement.lang || undefined);

  function showWrongPins(n) {
    const line = $("wrong-pins");
    line.textContent = n === 0 ? line.dataset.none : n === 1 ? line.dataset.one : `${n} ${line.dataset.some}`;
    line.dataset.count = String(n);
  }

  /** A device's session ended (or every one), then the list drawn again; the page busy until then. */
  function end(url) {
    return EB.busyWhile(api("DELETE", url).catch((err) => toast(errorText(err))).then(() => loadNow()));
  }

  let shown; // whether the last load found this device let in: the list drawn for it
  let loads = 0; // the loads begun: only the latest draws, so a slow answer never puts back what a newer one changed

  /** The devices let in, drawn for a device let in (the page busy until then, ``EB.busyWhile``). */
  function load() { return EB.busyWhile(loadNow()); }

  /** The page's look again while it is open (``LOOK_EVERY_MS``, and as it comes back into view): a device let in,
      or ended, on another device shows without a reload. Quiet: a companion out of reach is said by the top bar,
      not by a toast each time. */
  const LOOK_EVERY_MS = 10000;
  function lookAgain() { if (!document.hidden) EB.busyWhile(loadNow(true)); }

  async function loadNow(quiet = false) {
    const mine = ++loads;
    const say = (err) => { if (!quiet && mine === loads) toast(errorText(err)); };
    let status;
    try {
      status = await EB.askSession();
    } catch (err) {
      say(err);
      return;
    }
    if (status === null || mine !== loads) return; // asked before this page learned its control, or before a newer load
    showWrongPins(status.wrong_pins_last_hour);
    shown = status.control;
    EB.setControl(status.control); // "End every session" ended this device's too: the top bar offers the PIN again
    $("sessions-locked").hidden = status.control;
    $("sessions-table").hidden = !status.control;
    $("sessions-end-all").hidden = !status.control;
    if (!status.control) return;
    const body = $("sessions-body");
    let listed;
    try { listed = (await api("GET", "/api/sessions")).sessions; } catch (err) { say(err); return; }
    if (mine !== loads) return;
    body.replaceChildren(...listed.map((s) => el("tr", { "data-session": s.id },
      el("td", { text: s.device + (s.this_device ? ` (${body.dataset.this})` : "") }),
      el("td", { text: s.address }),
      el("td", { text: when(s.created_at) }),
      el("td", { text: when(s.last_seen) }),
      el("td", { text: when(s.expires_at) }),
      el("td", {}, el("button", { type: "button", class: "end-session", text: body.dataset.end, onclick: () => end(`/api/sessions/${encodeURIComponent(s.id)}`) })))));
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("sessions-end-all").addEventListener("click", () => end("/api/sessions"));
    // let in (or locked) from the top bar: the list shows, or hides, without a reload. The page's first check of the
    // PIN (common.js) tells it too, from "unknown": that is the first load, not one more beside it.
    document.addEventListener("eb-control", (e) => { if (e.detail.control !== shown) load(); });
    setInterval(lookAgain, LOOK_EVERY_MS);
    document.addEventListener("visibilitychange", lookAgain);
  });
})();
