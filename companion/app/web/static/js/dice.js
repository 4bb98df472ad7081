/* Dice, photos and verdict sentences, shared by the table, the list and the replay. */
"use strict";

const Dice = (() => {
  const { t, el } = EB;
  // Which of the 3x3 cells hold a pip, for each face.
  const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

  /** A die face drawn with pips (the pink elephants, as dots). */
  function face(value, extraClass) {
    const die = el("span", { class: "die" + (extraClass ? " " + extraClass : ""), role: "img", "aria-label": t("die_shows", { n: value }), "data-value": value });
    for (let i = 0; i < 9; i++) die.append(el("span", { class: PIPS[value] && PIPS[value].includes(i) ? "pip" : "pip-empty" }));
    return die;
  }

  function row(values, extraClass) {
    return el("div", { class: "dice-row" }, ...values.map((v) => face(v, extraClass)));
  }

  /** Whether a die was read below the confidence the reader counted as sure when it read it
      (kept with each reading: the setting may have changed since; 0.9 for older readings). */
  function unsure(reading, die) {
    const sureAt = reading && typeof reading.sure_at === "number" ? reading.sure_at : 0.9;
    return die.confidence < sureAt;
  }

  // The reader's reason codes (vision.reading.REASON_CODES) and their texts.
  const REASON_TEXTS = {
    count: "reason_count", cut_off: "reason_cut_off", leaning: "reason_leaning",
    low_confidence: "reason_low_confidence", dark: "reason_dark", blank: "reason_blank",
  };

  /** Why the reader was not sure, in the page's language; its English words when a code is
      unknown here (an unusable image, a newer reader); "" when it was sure. */
  function reasonText(reading) {
    if (!reading || reading.status === "ok") return "";
    const codes = Array.isArray(reading.reasons) ? reading.reasons : [];
    const known = codes.length > 0 && codes.every((r) => r && Object.prototype.hasOwnProperty.call(REASON_TEXTS, r.code));
    if (!known) return reading.reason || "";
    return codes.map((r) => t(REASON_TEXTS[r.code], {
      ...r, lowest: typeof r.lowest === "number" ? Math.round(100 * r.lowest) + " %" : undefined,
    })).join(" ");
  }

  /** The camera's frame with each die boxed and its top face; drawn dice when there is no photo. */
  function frame(holder, challenge, options) {
    holder.replaceChildren();
    const reading = challenge.reading;
    const readDice = reading && Array.isArray(reading.dice) ? reading.dice : [];
    if (challenge.has_images && challenge.image_url) {
      const wrap = el("div", { class: "frame" });
      const img = el("img", { src: challenge.image_url, alt: t("frame_alt"), class: "frame-img" });
      wrap.append(img);
      holder.append(wrap);
      const place = () => {
        const w = img.naturalWidth, h = img.naturalHeight;
        if (!w || !h) return;
        readDice.forEach((d, i) => {
          if (!d.box) return;
          const [x, y, bw, bh] = d.box;
          const box = el("span", { class: "box" + (unsure(reading, d) ? " box-unsure" : ""), "data-die": i },
            el("span", { class: "box-label", text: String(d.top) }));
          box.style.left = (100 * x / w) + "%";
          box.style.top = (100 * y / h) + "%";
          box.style.width = (100 * bw / w) + "%";
          box.style.height = (100 * bh / h) + "%";
          wrap.append(box);
        });
        if (options && options.onLoad) options.onLoad(img);
      };
      if (img.complete && img.naturalWidth) place(); else img.addEventListener("load", place, { once: true });
      return img;
    }
    const values = challenge.dice || readDice.map((d) => d.top);
    if (values.length) holder.append(row(values, "die-big"));
    holder.append(el("p", { class: "hint no-photo", text: t("no_photo") }));
    return null;
  }

  /** Three rows of six faces to tap: the top faces, as the table sees them (R14, R15).
      ``totalLine`` shows their sum once all three are chosen; ``onChange(dice, complete)``. */
  function pickers(holder, initial, totalLine, onChange) {
    holder.replaceChildren();
    const chosen = [null, null, null];
    (initial || []).slice(0, 3).forEach((v, i) => { if (v >= 1 && v <= 6) chosen[i] = v; });
    const rows = [0, 1, 2].map((i) => {
      const buttons = [1, 2, 3, 4, 5, 6].map((v) => {
        const b = el("button", { type: "button", class: "pick", "data-die": i, "data-value": v, "aria-pressed": "false", title: t("die_shows", { n: v }) }, face(v));
        b.addEventListener("click", () => { chosen[i] = v; sync(); });
        return b;
      });
      return el("div", { class: "pick-row", role: "group", "aria-label": t("confirm_die", { n: i + 1 }) },
        el("span", { class: "pick-label", text: t("confirm_die", { n: i + 1 }) }), ...buttons);
    });
    function sync() {
      rows.forEach((r, i) => r.querySelectorAll(".pick").forEach((b) => {
        b.setAttribute("aria-pressed", String(Number(b.dataset.value) === chosen[i]));
      }));
      const complete = chosen.every((v) => v !== null);
      totalLine.textContent = complete ? t("confirm_total", { n: chosen.reduce((a, b) => a + b, 0) }) : "";
      onChange(chosen.slice(), complete);
    }
    holder.append(...rows);
    sync();
  }

  /** The verdict in words: whether the claim held, who moves how far. */
  function verdict(challenge, names) {
    const v = challenge.verdict;
    if (!v) return null;
    const claim = challenge.claim, total = challenge.total;
    return {
      sign: v.claim_held ? "≥" : "<",
      held: v.claim_held ? t("verdict_held", { claim, total }) : t("verdict_failed", { claim, total }),
      move: t(v.steps === 2 ? "moves_two" : "moves_one", { name: names[v.mover] || "?" }) + " (" + v.rule + ")",
    };
  }

  /** Fill a verdict_numbers block (templates/_verdict.html) with one Bluff. */
  function showVerdict(prefix, challenge, names) {
    const words = verdict(challenge, names);
    const set = (part, text) => { document.getElementById(prefix + "-" + part).textContent = text; };
    set("claim", String(challenge.claim));
    set("total", challenge.total === null ? "?" : String(challenge.total));
    set("sign", words ? words.sign : "");
    set("held", words ? words.held : t("source_waiting"));
    set("move", words ? words.move : "");
  }

  function sourceText(challenge) {
    if (challenge.source === "camera") return t("source_camera");
    if (challenge.source === "table") return t("source_table");
    if (challenge.source === "correction") return t("source_correction");
    return t("source_waiting");
  }

  return { face, row, frame, pickers, verdict, showVerdict, sourceText, unsure, reasonText };
})();
