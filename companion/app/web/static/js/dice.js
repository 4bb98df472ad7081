/* Dice, photos and verdict sentences, shared by the table, the list and the replay. */
"use strict";

const Dice = (() => {
  const { t, tn, el } = EB;
  // Which of the 3x3 cells hold a pip, for each face.
  const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

  /** A die face drawn with pips (the pink elephants, as dots). */
  function face(value, extraClass) {
    const die = el("span", { class: "die" + (extraClass ? " " + extraClass : ""), role: "img", "aria-label": tn("die_shows", "die_shows_plural", value, { n: value }), "data-value": value });
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
    low_confidence: "reason_low_confidence", dark: "reason_dark", blank: "reason_blank", size: "reason_size",
    marks: "reason_marks", second_look: "reason_second_look", second_opinion: "reason_second_opinion",
    unlike: "reason_unlike", calibration: "reason_calibration",
  };

  /** A share (0.62) as the page's language writes a percentage: "62%" in English, "62 %" in French and German. */
  function percent(share) {
    return new Intl.NumberFormat(document.documentElement.lang || undefined, { style: "percent", maximumFractionDigits: 0 }).format(share);
  }

  /** Why the reader was not sure, in the page's language; its English words when a code is
      unknown here (an unusable image, a newer reader); "" when it was sure. */
  function reasonText(reading) {
    if (!reading || reading.status === "ok") return "";
    const codes = Array.isArray(reading.reasons) ? reading.reasons : [];
    const known = codes.length > 0 && codes.every((r) => r && Object.prototype.hasOwnProperty.call(REASON_TEXTS, r.code));
    if (!known) return reading.reason || "";
    return codes.map((r) => {
      const params = { ...r, lowest: typeof r.lowest === "number" ? percent(r.lowest) : undefined };
      // "The camera saw 7 things like dice, not 3": never "7 of 3".
      if (r.code === "count") return tn("reason_count", "reason_count_plural", Number(r.found) || 0, params);
      if (r.code === "low_confidence") return tn("reason_low_confidence", "reason_low_confidence_plural", Number(r.n) || 0, params);
      if (r.code === "second_look") return tn("reason_second_look", "reason_second_look_plural", Number(r.n) || 0, params);
      if (r.code === "calibration") return t("reason_calibration", { frame: Array.isArray(r.frame) ? r.frame.join("×") : "" });
      return t(REASON_TEXTS[r.code], params);
    }).join(" ");
  }

  /** Why a Bluff's capture gave no reading or no photo, in the page's language (``EB.captureProblemText``). */
  function problemText(challenge) {
    return EB.captureProblemText(challenge.problem_codes, challenge.problem);
  }

  /** Whether the table played this Bluff without the camera (the camera switched off on the page). */
  function playedWithoutCamera(challenge) {
    return Array.isArray(challenge.problem_codes) && challenge.problem_codes.some((p) => p && p.code === "played_without_camera");
  }

  /** The top faces the Bluff counts now: agreed (camera, table or correction) or, before that, the reading's. */
  function agreedDice(challenge) {
    if (Array.isArray(challenge.dice)) return challenge.dice;
    const reading = challenge.reading;
    return reading && Array.isArray(reading.dice) ? reading.dice.map((d) => d.top) : [];
  }

  /** The dice the reader found, in the order of the counted dice (die 1, 2, 3): only when it found
      at most three, each boxed. Seven "dice" on a photo of three cannot be matched to them. */
  function boxedDice(challenge) {
    const reading = challenge.reading;
    const dice = reading && Array.isArray(reading.dice) ? reading.dice : [];
    return dice.length >= 1 && dice.length <= 3 && dice.every((d) => Array.isArray(d.box)) ? dice : [];
  }

  /** The camera's photo (it sees the BOTTOM faces), each die boxed with its number, and below it a
      legend: the face the camera saw and the top face that means, and the agreed top face where the
      table confirmed or corrected another one. Numbers only, on the photo: touching dice never hide
      each other's labels. ``options.numbers``: no legend (the confirmation cards say it). */
  function frame(holder, challenge, options) {
    holder.replaceChildren();
    const reading = challenge.reading;
    const readDice = reading && Array.isArray(reading.dice) ? reading.dice : [];
    const boxed = boxedDice(challenge);
    const agreed = Array.isArray(challenge.dice) ? challenge.dice : null;
    if (challenge.has_images && challenge.image_url) {
      const wrap = el("div", { class: "frame" });
      const img = el("img", { src: challenge.image_url, alt: t("frame_alt"), class: "frame-img" });
      wrap.append(img);
      holder.append(wrap);
      const place = () => {
        const w = img.naturalWidth, h = img.naturalHeight;
        if (!w || !h) return;
        boxed.forEach((d, i) => {
          const [x, y, bw, bh] = d.box;
          const label = String(i + 1);
          const changed = agreed && agreed[i] !== d.top;
          const box = el("span", { class: "box" + (unsure(reading, d) ? " box-unsure" : "") + (changed ? " box-changed" : ""), "data-die": i },
            el("span", { class: "box-label", text: label }));
          box.style.left = (100 * x / w) + "%";
          box.style.top = (100 * y / h) + "%";
          box.style.width = (100 * bw / w) + "%";
          box.style.height = (100 * bh / h) + "%";
          wrap.append(box);
        });
        if (options && options.onLoad) options.onLoad(img);
      };
      if (boxed.length && !(options && options.numbers)) {
        holder.append(el("ol", { class: "box-legend" }, ...boxed.map((d, i) => el("li", { "data-die": i },
          t("die_n", { n: i + 1 }) + ": " + t("box_seen_top", { seen: d.seen, top: d.top }) +
          (agreed && agreed[i] !== d.top ? " · " + t("box_fixed", { top: agreed[i] }) : "")))));
      }
      if (img.complete && img.naturalWidth) place(); else img.addEventListener("load", place, { once: true });
      return img;
    }
    if (!(options && options.noDrawn)) {
      const values = agreed || readDice.map((d) => d.top);
      if (values.length) holder.append(row(values, "die-big"));
    }
    holder.append(el("p", { class: "hint no-photo", text: t("no_photo") }));
    return null;
  }

  /** One die of the photo, cut out by CSS (the frame itself, scaled and shifted so only its box shows).
      ``size`` is the square's side in pixels; the scale and shift are in percent of the square, so a stylesheet
      that draws it smaller (the phone's 52 px) still shows the die, centred, not the photo's top-left corner. */
  function crop(challenge, img, box, size, label) {
    const picture = el("span", { class: "crop", role: "img", "aria-label": label });
    picture.style.width = picture.style.height = size + "px";
    picture.style.backgroundImage = `url("${challenge.image_url}")`;
    const [bx, by] = cropBackground(box, img.naturalWidth, img.naturalHeight);
    picture.style.backgroundSize = `${bx.size}% ${by.size}%`;
    picture.style.backgroundPosition = `${bx.at}% ${by.at}%`;
    return picture;
  }

  /** For each axis: the photo's size in percent of a square of side ``max(w, h)`` around the box, and the
      background position (CSS's percent: that point of the photo on that point of the square) that centres the box. */
  function cropBackground(box, width, height) {
    const [x, y, w, h] = box;
    const side = Math.max(w, h, 1);
    const axis = (start, extent, photo) => {
      const size = photo / side;  // the photo, in squares
      const shift = -start / side + (1 - extent / side) / 2;  // the photo's left edge from the square's, in squares
      return { size: size * 100, at: Math.abs(1 - size) < 1e-9 ? 50 : (shift / (1 - size)) * 100 };
    };
    return [axis(x, w, width), axis(y, h, height)];
  }

  /** Who agreed on the dice and when: "Confirmed by the table at 21:04", "Corrected by Ben at 21:10". */
  function agreedText(challenge, lang) {
    const last = challenge.corrections && challenge.corrections.length ? challenge.corrections[challenge.corrections.length - 1] : null;
    const time = (at) => new Date(at).toLocaleTimeString(lang, { hour: "2-digit", minute: "2-digit" });
    if (last) return t("agreed_corrected", { by: last.by === "table" ? t("the_table") : last.by, at: time(last.at) });
    if (challenge.source === "table") return challenge.confirmed && challenge.confirmed.at ? t("agreed_confirmed_at", { at: time(challenge.confirmed.at) }) : t("agreed_confirmed");
    if (challenge.source === "camera") return t("agreed_camera");
    return "";
  }

  /** Three rows of six faces to tap: the top faces, as the table sees them (R14, R15).
      ``totalLine`` shows their sum once all three are chosen; ``onChange(dice, complete)``. */
  function pickers(holder, initial, totalLine, onChange) {
    holder.replaceChildren();
    const chosen = [null, null, null];
    (initial || []).slice(0, 3).forEach((v, i) => { if (v >= 1 && v <= 6) chosen[i] = v; });
    const rows = [0, 1, 2].map((i) => {
      const buttons = [1, 2, 3, 4, 5, 6].map((v) => {
        const b = el("button", { type: "button", class: "pick", "data-die": i, "data-value": v, "aria-pressed": "false", title: tn("die_shows", "die_shows_plural", v, { n: v }) }, face(v));
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
      if (totalLine) totalLine.textContent = complete ? t("confirm_total", { n: chosen.reduce((a, b) => a + b, 0) }) : "";
      onChange(chosen.slice(), complete);
    }
    holder.append(...rows);
    sync();
  }

  /** The uncertain reading (R14): one card per die with its crop from the photo and the question
      "what is on TOP of this die?". The reader's own answer is chosen already only for a die it
      read sure: a guess it doubted (a glare spot boxed as a die, a blurred face) is shown on its card
      but left for the table to tap, so "These are the dice" cannot confirm a doubt unlooked-at.
      ``onChange(dice, complete)``. ``kept``: the faces chosen already, where the cards are drawn again (with
      the photo's crops once it has loaded), so a tap made before is not lost. */
  function confirmCards(holder, challenge, img, totalLine, onChange, kept) {
    holder.replaceChildren();
    const boxed = boxedDice(challenge);
    const sure = [null, null, null]; // the reader's own answer, for the dice it read sure
    boxed.forEach((d, i) => { if (d.top >= 1 && d.top <= 6 && !unsure(challenge.reading, d)) sure[i] = d.top; });
    const chosen = sure.slice();
    (kept || []).forEach((v, i) => { if (i < 3 && Number.isInteger(v) && v >= 1 && v <= 6) chosen[i] = v; });
    const cards = [0, 1, 2].map((i) => {
      const d = boxed[i];
      let picture;
      if (d && img && img.naturalWidth) picture = crop(challenge, img, d.box, 96, t("die_n", { n: i + 1 }));
      else picture = el("span", { class: "crop crop-none", text: String(i + 1) });
      const buttons = [1, 2, 3, 4, 5, 6].map((v) => {
        const b = el("button", { type: "button", class: "pick", "data-die": i, "data-value": v, "aria-pressed": "false", title: tn("die_shows", "die_shows_plural", v, { n: v }) }, face(v));
        b.addEventListener("click", () => { chosen[i] = v; sync(); });
        return b;
      });
      let guess = playedWithoutCamera(challenge) ? "" : t("card_no_guess"); // no camera: nothing it could not read
      if (d) guess = sure[i] === null ? t("card_doubt", { seen: d.seen, top: d.top }) : t("card_guess", { seen: d.seen, top: d.top });
      if (d) picture.append(el("span", { class: "crop-no", text: String(i + 1) }));
      return el("div", { class: "confirm-card", role: "group", "aria-label": t("card_question", { n: i + 1 }), "data-die": i },
        el("div", { class: "card-head" }, picture,
          el("div", {}, el("strong", { class: "card-question", text: t("card_question", { n: i + 1 }) }),
            el("span", { class: "hint card-guess", text: guess }))),
        el("div", { class: "pick-row" }, ...buttons));
    });
    function sync() {
      cards.forEach((c, i) => c.querySelectorAll(".pick").forEach((b) => {
        b.setAttribute("aria-pressed", String(Number(b.dataset.value) === chosen[i]));
      }));
      const complete = chosen.every((v) => v !== null);
      totalLine.textContent = complete ? t("confirm_total", { n: chosen.reduce((a, b) => a + b, 0) }) : "";
      onChange(chosen.slice(), complete);
    }
    holder.append(...cards);
    sync();
  }

  /** The verdict in words: whether the claim held, who moves how far. */
  function verdict(challenge, names) {
    const v = challenge.verdict;
    if (!v) return null;
    const claim = challenge.claim, total = challenge.total;
    return {
      sign: v.claim_held ? "≥" : "<",
      held: v.claim_held ? tn("verdict_held", "verdict_held_plural", total, { claim, total }) : tn("verdict_failed", "verdict_failed_plural", total, { claim, total }),
      move: t(v.steps === 2 ? "moves_two" : "moves_one", { name: names[v.mover] || "?" }),
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

  return { face, row, frame, crop, pickers, confirmCards, agreedDice, boxedDice, agreedText, verdict, showVerdict, sourceText, unsure, reasonText, problemText, playedWithoutCamera, percent };
})();
