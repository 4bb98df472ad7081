/* The camera set-up page: a live preview (about one picture a second), the tray's region drawn on it,
   light and focus hints, the empty tray, the wide lens's bend (a printed chessboard), a die's size, "show each face" (always the TOP face), teaching.
   Every request needs the table PIN; during a game the server refuses them all (R13). */
"use strict";

(() => {
  const { t, tn, el, api, ApiError, errorText, toast, findingText } = EB;
  const $ = (id) => document.getElementById(id);
  const canvas = $("setup-canvas");
  const ctx = canvas.getContext("2d");
  let frameSize = null; // [w, h] of the camera's picture
  let region = null; // [x, y, w, h] in the camera's pixels
  let drawnNotKept = false; // a region dragged on the preview and not yet kept: the periodic check leaves it drawn
  let drag = null;
  let diceLeft = null; // [[x, y, w, h], ...]: what the reader took for dice on the tray "The empty tray" was refused for
  let running = false;
  let top = 1;
  let counts = {};
  let wanted = 4;

  /** Why a set-up step was refused, by the server's code, in the page's language (the TOP face is what the player sees). */
  const REFUSED = {
    no_die: () => t("cam_err_no_die"),
    too_many: () => t("cam_err_too_many"),
    not_flat: () => t("cam_err_not_flat"),
    not_empty: () => t("cam_err_not_empty"),
    dark: () => t("cam_hint_dark"),
    bright: () => t("cam_hint_bright"),
    not_measured: () => t("cam_err_not_measured"),
    region_small: () => t("cam_err_region_small"),
    region_outside: () => t("cam_err_region_outside"),
    no_board: () => t("cam_err_no_board"),
    board_small: () => t("cam_err_board_small"),
    board_not_flat: () => t("cam_err_board_not_flat"),
  };
  const HINTS = {
    dark: () => t("cam_hint_dark"),
    bright: () => t("cam_hint_bright"),
    glare: () => t("cam_hint_glare"),
    blur: () => t("cam_hint_blur"),
    calibration: (h) => t("cam_hint_calibration", { frame: Array.isArray(h.frame) ? h.frame.join("×") : "" }),
    region_small: () => t("cam_err_region_small"),
    lens: () => t("cam_hint_lens"),
  };

  function problemText(e) {
    if (e instanceof ApiError && e.status === 422 && REFUSED[e.code]) return REFUSED[e.code]();
    if (e instanceof ApiError && e.code === "teaching") return t("cam_err_teaching"); // another tablet teaches now
    if (e instanceof ApiError && e.code === "cannot_teach") return t("cam_err_cannot_teach"); // too few of some face
    return errorText(e);
  }

  async function request(method, url, body, refused) {
    try {
      return await api(method, url, body);
    } catch (e) {
      if (refused) refused(e);
      if (e instanceof ApiError && e.status === 401) { stop("locked"); return null; }
      if (e instanceof ApiError && e.status === 409 && e.code === "game_in_progress") { stop("game"); return null; }
      toast(problemText(e));
      return null;
    }
  }

  function stop(why) {
    running = false;
    $("setup-body").hidden = true;
    $("setup-locked").hidden = why !== "locked";
    $("setup-game").hidden = why !== "game";
  }

  let lastImage = null; // the preview drawn last: a region changed from the keyboard is drawn on it at once

  function draw(image) {
    lastImage = image;
    canvas.width = image.width;
    canvas.height = image.height;
    ctx.drawImage(image, 0, 0);
    canvas.dataset.drawn = "yes";
    const box = drag ? drag.box : region;
    if (box && box.length === 4 && frameSize) {
      const s = canvas.width / frameSize[0];
      ctx.strokeStyle = "#ff5fa2";
      ctx.lineWidth = 3;
      ctx.strokeRect(box[0] * s, box[1] * s, box[2] * s, box[3] * s);
    }
    if (diceLeft && frameSize) { // ringed until the next try: a die to take off, or a crumb or reflection to wipe away
      const s = canvas.width / frameSize[0];
      ctx.strokeStyle = "#ffd400";
      ctx.lineWidth = 4;
      for (const [x, y, w, h] of diceLeft) {
        ctx.beginPath();
        ctx.arc((x + w / 2) * s, (y + h / 2) * s, Math.max(w, h) * 0.75 * s + 4, 0, 2 * Math.PI);
        ctx.stroke();
      }
    }
    canvas.dataset.ringed = String(diceLeft ? diceLeft.length : 0);
  }

  let previewRound = 0; // a loop left asleep by a stop, when the set-up opens again within its second, ends there
  async function previewLoop() {
    const round = ++previewRound;
    while (running && round === previewRound) {
      try {
        const response = await fetch("/api/setup/preview", { credentials: "same-origin", cache: "no-store" });
        if (response.status === 401) { stop("locked"); break; }
        if (response.status === 409) { stop("game"); break; }
        if (response.ok) {
          const image = await createImageBitmap(await response.blob());
          draw(image);
        }
      } catch (e) { /* the next picture will try again */ }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  /** The lens's bend as measured: k, and k2 where the lens needs it (camera.lens_distortion, camera.lens_distortion_k2). */
  function bendText(r) {
    return r.lens_distortion.toFixed(3) + (r.lens_distortion_k2 ? " + " + r.lens_distortion_k2.toFixed(3) + "·r⁴" : "");
  }

  function showCheck(c) {
    frameSize = c.frame;
    // one kept for another picture is drawn again, never sent back; one drawn and not yet kept stays until it is
    if (!drawnNotKept) region = fitsThePicture(c.region) ? c.region : null;
    $("setup-measures").textContent = t("cam_brightness", { n: Math.round(c.brightness) }) + " · " + t("cam_sharpness", { n: Math.round(c.sharpness), min: Math.round(c.min_sharpness) })
      + (c.die_side_px ? " · " + tn("cam_size_done", "cam_size_done_plural", c.die_side_px, { n: c.die_side_px }) : "")
      + (c.lens_distortion || c.lens_distortion_k2 ? " · " + t("cam_lens_done", { k: bendText(c) }) : "");
    if (c.shots_per_top) { // "Show each face" as far as the table's dataset has it (a reload, another tablet)
      const fresh = [1, 2, 3, 4, 5, 6].every((v) => !counts[v]);
      counts = c.shots_per_top;
      wanted = c.shots_wanted;
      if (fresh) top = [1, 2, 3, 4, 5, 6].find((v) => (counts[v] || 0) < wanted) || top;
      showAsk();
    }
    const list = $("setup-hints");
    list.replaceChildren(...(c.hints.length ? c.hints.map((h) => el("li", { text: HINTS[h.code] ? HINTS[h.code](h) : h.message })) : [el("li", { text: t("cam_hint_ok") })]));
  }

  async function runTableCheck() {
    const c = await request("GET", "/api/check");
    if (!c) return;
    const list = $("setup-check-list");
    list.replaceChildren(...(c.findings.length ? c.findings.map((f) => el("li", { text: findingText(f) })) : [el("li", { text: t("cam_check_ready") })]));
    // said to a screen reader too: the list changes where the player is not (the measures beside it refresh every
    // 5 s and are not live; the one-shot answers, lens, size, face and teaching, are status lines in the page)
    EB.announce([...list.children].map((li) => li.textContent).join(" "));
  }

  $("setup-check-run").addEventListener("click", runTableCheck);

  async function refreshCheck() {
    const c = await request("GET", "/api/setup/check");
    if (c) showCheck(c);
    return c;
  }

  /** Whether ``box`` ([x, y, w, h]) lies inside the camera's picture, as the server asks of a region. */
  function fitsThePicture(box) {
    return Array.isArray(box) && box.length === 4 && !!frameSize
      && box[0] >= 0 && box[1] >= 0 && box[0] + box[2] <= frameSize[0] && box[1] + box[3] <= frameSize[1];
  }

  const clamp = (v, low, high) => Math.min(Math.max(v, low), high);

  /** The camera's pixel under the pointer, kept inside the picture: a drag that runs past the picture's edge
      draws the region to that edge. */
  function canvasPoint(event) {
    const rect = canvas.getBoundingClientRect();
    const s = frameSize ? frameSize[0] / rect.width : 1;
    const x = Math.round((event.clientX - rect.left) * s), y = Math.round((event.clientY - rect.top) * s);
    if (!frameSize) return [x, y];
    return [clamp(x, 0, frameSize[0]), clamp(y, 0, frameSize[1])];
  }

  canvas.addEventListener("pointerdown", (event) => { drag = { from: canvasPoint(event), box: null }; canvas.setPointerCapture(event.pointerId); });
  canvas.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const [x, y] = canvasPoint(event);
    const [x0, y0] = drag.from;
    drag.box = [Math.min(x, x0), Math.min(y, y0), Math.abs(x - x0), Math.abs(y - y0)];
  });
  canvas.addEventListener("pointerup", () => { if (drag && drag.box) { region = drag.box; drawnNotKept = true; } drag = null; });

  /* The keyboard's way to draw the region (the preview takes the focus): an arrow key moves it a fiftieth of the
     picture, Shift and an arrow key make it wider or taller (right, down) or narrower or shorter (left, up). The
     first key starts from the middle half of the picture. Each change is said, in the camera's pixels. */
  const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  canvas.addEventListener("keydown", (event) => {
    if (!frameSize || !ARROWS[event.key] || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    const [W, H] = frameSize;
    const step = Math.max(1, Math.round(W / 50));
    let [x, y, w, h] = fitsThePicture(region) ? region : [Math.round(W / 4), Math.round(H / 4), Math.round(W / 2), Math.round(H / 2)];
    const [dx, dy] = ARROWS[event.key];
    if (event.shiftKey) {
      w = clamp(w + dx * step, 2 * step, W - x);
      h = clamp(h + dy * step, 2 * step, H - y);
    } else {
      x = clamp(x + dx * step, 0, W - w);
      y = clamp(y + dy * step, 0, H - h);
    }
    region = [x, y, w, h];
    drawnNotKept = true;
    if (lastImage) draw(lastImage);
    EB.announce(t("cam_region_now", { x, y, w, h }));
  });

  function showAsk() {
    $("setup-face-ask").textContent = tn("cam_face_ask", "cam_face_ask_plural", top, { n: top });
    $("setup-face-counts").replaceChildren(...[1, 2, 3, 4, 5, 6].map((v) =>
      // "1 photo sur 4" but "2 photos sur 4": the form follows the pictures taken (k)
      el("li", { text: tn("cam_face_count", "cam_face_count_plural", counts[v] || 0, { n: v, k: counts[v] || 0, want: wanted }) })));
  }

  async function shoot() {
    const r = await request("POST", "/api/setup/face", { top });
    if (!r) return;
    counts = r.shots_per_top;
    wanted = r.shots_wanted;
    $("setup-face-out").textContent = t("cam_face_read", { n: r.read_top }) + " " + (r.agrees ? t("cam_face_agrees") : t("cam_face_differs"));
    if ((counts[top] || 0) >= wanted) {
      const next = [1, 2, 3, 4, 5, 6].find((v) => (counts[v] || 0) < wanted);
      if (next) top = next;
    }
    showAsk();
  }

  async function showModel() {
    const m = await request("GET", "/api/model");
    // the model that reads now; one adopted or rolled back from a terminal reads after a restart, and is said so
    if (m) $("setup-model").textContent = t("cam_model_active", { id: m.reading_with }) + (m.taught && m.reading_with === m.active ? " · " + t("cam_model_taught") : "")
      + (m.reading_with !== m.active ? " · " + t("cam_model_after_restart", { id: m.active }) : "");
    $("setup-rollback").disabled = !(m && m.can_roll_back);
  }

  async function teach() {
    const button = $("setup-teach");
    if (button.disabled) return;
    button.disabled = true; // one fit at a time from this tablet; another tablet's is refused in words
    $("setup-teach-out").textContent = t("cam_teaching");
    let r;
    try { r = await request("POST", "/api/model/teach"); } finally { button.disabled = false; }
    if (!r) { $("setup-teach-out").textContent = ""; return; }
    const b = r.before.owner, a = r.after.owner;
    $("setup-teach-out").textContent = t("cam_teach_result", { before: b.right, after: a.right, n: a.dice }) + " " + (r.adopted ? t("cam_teach_adopted") : t("cam_teach_kept"));
    showModel();
  }

  $("setup-region-save").addEventListener("click", async () => {
    if (!region) { toast(t("cam_region_draw_first")); return; }
    const c = await request("POST", "/api/setup/region", { region });
    if (c) { drawnNotKept = false; showCheck(c); toast(t("cam_saved")); }
  });
  $("setup-region-whole").addEventListener("click", async () => { const c = await request("POST", "/api/setup/region", { region: [] }); if (c) { drawnNotKept = false; showCheck(c); toast(t("cam_saved")); } });
  $("setup-empty").addEventListener("click", async () => {
    diceLeft = null;
    const c = await request("POST", "/api/setup/empty-tray", undefined, (e) => {
      if (e instanceof ApiError && e.code === "not_empty" && Array.isArray(e.params.at)) diceLeft = e.params.at;
    });
    if (lastImage) draw(lastImage); // rings drawn, or taken away, at once, not at the next picture
    if (c) { drawnNotKept = false; showCheck(c); toast(t("cam_saved")); }
  });
  $("setup-size").addEventListener("click", async () => { const r = await request("POST", "/api/setup/die-size"); if (r) $("setup-size-out").textContent = tn("cam_size_done", "cam_size_done_plural", r.die_side_px, { n: r.die_side_px }); });
  async function lens(method) {
    const r = await request(method, "/api/setup/lens");
    if (!r) return;
    $("setup-lens-out").textContent = (r.lens_distortion || r.lens_distortion_k2 ? t("cam_lens_done", { k: bendText(r) }) : t("cam_lens_forgotten"))
      + (r.measure_die_again ? " " + t("cam_lens_size_again") : "");
    refreshCheck();
  }

  $("setup-lens").addEventListener("click", () => lens("POST"));
  $("setup-lens-forget").addEventListener("click", () => lens("DELETE"));
  $("setup-face-shoot").addEventListener("click", shoot);
  $("setup-teach").addEventListener("click", teach);
  $("setup-rollback").addEventListener("click", async () => { if (await request("POST", "/api/model/rollback")) { toast(t("cam_rolled_back")); showModel(); } });

  /** The set-up opened where the companion lets this device in and no game is played; else stopped, saying why. One
      at a time (the page's load and its first word on the PIN come together); the page is busy meanwhile. */
  let starting = null;
  function start() {
    if (!starting) starting = EB.busyWhile(startNow()).finally(() => { starting = null; });
    return starting;
  }

  async function startNow() {
    const c = await refreshCheck();
    if (!c) return;
    $("setup-locked").hidden = true;
    $("setup-game").hidden = true;
    $("setup-body").hidden = false;
    showAsk();
    showModel();
    if (!running) { running = true; previewLoop(); }
  }

  // Let in (the PIN dialog): opened once the PIN's answer is in, however long it takes; a look still on its way was
  // asked before and says "locked", so the page looks again after it. Locked (the top bar): stopped at once.
  document.addEventListener("eb-control", async (e) => {
    if (!e.detail.control) { if (running) stop("locked"); return; }
    await starting;
    if (!running) start();
  });
  setInterval(() => { if (running) refreshCheck(); }, 5000);
  // stopped for a game in progress: the page opens again by itself once no game is played (every 10 s)
  setInterval(async () => {
    if (running || $("setup-game").hidden) return;
    try { const list = await api("GET", "/api/games"); if (!list.current) start(); } catch (e) { /* asked again later */ }
  }, 10000);
  start();
})();
