/* One Bluff replayed: the full frame, each die's crop and confidence, the
   verdict, and the correction form that re-decides it (R15) with its audit trail. */
"use strict";

(() => {
  const { t, el, api, act, toast } = EB;
  let gameNow = null;
  const $ = (id) => document.getElementById(id);
  const cid = $("bluff-detail").dataset.challenge;
  let chosen = [null, null, null];
  let current = null;

  function crops(challenge, img) {
    const list = $("bluff-crops");
    const dice = challenge.reading && Array.isArray(challenge.reading.dice) ? challenge.reading.dice : [];
    list.replaceChildren(...dice.map((d, i) => {
      let picture;
      if (img && d.box && img.naturalWidth) {
        picture = Dice.crop(challenge, img, d.box, 128, t("die_n", { n: i + 1 }));
      } else {
        picture = Dice.face(d.top, "die-big");
      }
      return el("li", { class: "crop-item" + (Dice.unsure(challenge.reading, d) ? " unsure" : ""), "data-die": i },
        picture,
        el("strong", { class: "crop-value", text: t("die_top", { n: i + 1, top: d.top }) }),
        el("span", { class: "confidence", text: t("confidence", { p: Dice.percent(d.confidence) }) }),
        el("span", { class: "hint", text: t("die_seen", { n: d.seen }) }));
    }));
    if (!dice.length) list.append(el("li", { class: "hint", text: t("no_dice_found") }));
  }

  function draw(challenge, game) {
    current = challenge;
    gameNow = game;
    const names = game.players.map((p) => p.name);
    const by = $("correct-by");
    const keep = by.value;
    by.replaceChildren(el("option", { value: "table", text: t("the_table") }), ...names.map((n) => el("option", { value: n, text: n })));
    if (keep && [...by.options].some((o) => o.value === keep)) by.value = keep;
    $("bluff-body").hidden = false;
    $("bluff-title").textContent = t("bluff_title", { n: challenge.round });
    $("bluff-who").textContent = t("bluff_who", { claimer: names[challenge.claimer], caller: names[challenge.caller] });
    $("back-to-list").href = "/bluffs?game=" + encodeURIComponent(challenge.game);
    const img = Dice.frame($("bluff-frame"), challenge, { onLoad: (image) => crops(challenge, image) });
    if (!img) crops(challenge, null);
    $("bluff-annotated").hidden = !challenge.annotated_url;
    if (challenge.annotated_url) $("bluff-annotated").href = challenge.annotated_url;
    const r = challenge.reading;
    // a second look (the tray's Confirm button) decided it: the photo and reading are that look's, and it says so
    const again = challenge.first_look ? t("reading_read_again") : "";
    $("bluff-reading").textContent = r
      ? [again, t(r.status === "ok" ? "reading_ok" : "reading_unsure", { model: r.model || "?" }), Dice.reasonText(r), Dice.problemText(challenge)].filter(Boolean).join(" ")
      : [Dice.playedWithoutCamera(challenge) ? "" : t("reading_none"), Dice.problemText(challenge)].filter(Boolean).join(" ");
    Dice.showVerdict("bluff", challenge, names);
    $("bluff-source").textContent = (challenge.dice ? t("agreed_dice", { dice: challenge.dice.join(" + ") }) + " " : "") + (Dice.agreedText(challenge, document.documentElement.lang) || Dice.sourceText(challenge));
    $("correct-form").hidden = challenge.status !== "decided";
    // A redraw (this page's correction, or one made on another device, coming back on the live stream) draws the
    // faces anew: a keyboard player on one of them stays on that die's same face, not thrown to the top of the page
    const on = document.activeElement && document.activeElement.closest ? document.activeElement.closest("#correct-pickers .pick") : null;
    const was = on ? { die: on.dataset.die, value: on.dataset.value } : null;
    Dice.pickers($("correct-pickers"), challenge.dice || [], $("correct-total"), (dice, complete) => {
      chosen = dice;
      const same = complete && challenge.dice && dice.every((v, i) => v === challenge.dice[i]);
      $("correct-submit").disabled = !complete || same;  // the referee refuses an unchanged "correction"
    });
    if (was) EB.focusIfLost($("correct-pickers").querySelector(`.pick[data-die="${was.die}"][data-value="${was.value}"]`));
    const history = challenge.corrections.map((c) => el("li", {
      text: t("history_row", { at: when(c.at), by: c.by === "table" ? t("the_table") : c.by, old: c.old.join(" + "), new: c.new.join(" + ") }),
    }));
    $("history").replaceChildren(...history);
    $("history-none").hidden = history.length > 0;
  }

  /** When a correction was made, the month in words ("6 December 2026 at 19:14:59"): never "12/6/2026", which a table
      in Europe reads as 12 June. In the browser's own variant of the page's language (en-GB, en-US) where it has one. */
  function when(at) {
    const lang = document.documentElement.lang;
    const own = (navigator.languages || []).find((l) => l.split("-")[0].toLowerCase() === lang);
    return new Date(at).toLocaleString(own || lang, { dateStyle: "long", timeStyle: "medium" });
  }

  let shown = null; // the challenge as last drawn, to redraw only when it changed

  async function load() {
    try {
      const challenge = await api("GET", "/api/challenges/" + encodeURIComponent(cid));
      if (JSON.stringify(challenge) === shown) return;
      const game = await api("GET", "/api/games/" + encodeURIComponent(challenge.game));
      draw(challenge, game);
      if (shown === null) {
        // A correction made on another device, or the table confirming this Bluff's dice, shows here.
        EB.live("/api/events?game=" + encodeURIComponent(challenge.game), (state) => { if (state.id === challenge.game) load(); });
      }
      shown = JSON.stringify(challenge);
    } catch (e) {
      $("bluff-title").textContent = t("bluffs_title");
      if (e instanceof EB.ApiError && e.status === 404) $("bluff-missing").hidden = false; else toast(EB.errorText(e));
    }
  }

  async function sendCorrection(afterGameOver) {
    const by = $("correct-by").value || "table";
    const body = { dice: chosen, by };
    if (afterGameOver) body.after_game_over = true;
    const data = await act("POST", `/api/challenges/${encodeURIComponent(cid)}/correct`, body, [$("correct-submit"), $("over-dialog-ok")]);
    $("over-dialog").close();
    if (data) {
      toast(t(data.state.last_correction && data.state.last_correction.reopened ? "correct_done_reopened" : "correct_done"));
      draw(data.challenge, data.state);
      shown = JSON.stringify(data.challenge);
      // the faces were drawn again: a keyboard player stays on the first die's face as corrected
      EB.focusIfLost($("correct-pickers").querySelector(".pick[aria-pressed='true']"));
    }
  }

  $("correct-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("correct-error").hidden = true;
    if (!current || chosen.some((v) => v === null)) return;
    // the game as it is now: it may have ended on another tablet since this page drew it (the correction was then
    // refused, and the question below never asked)
    try { gameNow = await api("GET", "/api/games/" + encodeURIComponent(current.game)); } catch (e) { /* asked with what the page has */ }
    if (gameNow && gameNow.phase === "over") {
      // A finished game: the correction may reopen it or change who lost (R12, R15). Ask first.
      $("over-dialog-text").textContent = t("correct_over_text", { name: EB.playerName(gameNow, gameNow.loser) });
      $("over-dialog").showModal();
      return;
    }
    await sendCorrection(false);
  });
  $("over-dialog-back").addEventListener("click", () => $("over-dialog").close());
  $("over-dialog-ok").addEventListener("click", () => sendCorrection(true));

  EB.arrowKeys($("correct-pickers"), ".pick", ".pick-row");
  document.addEventListener("DOMContentLoaded", () => EB.busyWhile(load())); // busy until drawn (body[data-busy])
})();
