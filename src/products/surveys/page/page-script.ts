// The hosted page's client script, served as /s/_/survey.js. Plain ES2017, no framework and no
// build step: it drives the public response flow (start, one question at a time, answers checked
// by the server, branching and AI questions as the server decides, going back to the previous
// question with its answer pre-filled, completion) and, inside an embed iframe, reports its height
// and the completion to the parent page with postMessage.
export const PAGE_SCRIPT = String.raw`(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("survey-config").textContent);
  var api = config.api;
  var root = document.getElementById("survey");
  var embedded = window.parent !== window;
  var storageKey = "edge-survey:" + config.slug;
  var state = { responseId: null, question: null, answered: 0, canGoBack: false, previous: null, total: config.questionCount };
  var SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "on") Object.keys(attrs.on).forEach(function (e) { node.addEventListener(e, attrs.on[e]); });
      else if (attrs[k] !== undefined && attrs[k] !== null && attrs[k] !== false) node.setAttribute(k, attrs[k] === true ? "" : attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }

  function post(type, extra) {
    if (!embedded) return;
    var message = { source: "edge-survey", type: type, slug: config.slug };
    Object.keys(extra || {}).forEach(function (k) { message[k] = extra[k]; });
    window.parent.postMessage(message, "*");
  }

  function reportHeight() { post("resize", { height: Math.ceil(document.documentElement.scrollHeight) }); }
  if (embedded && window.ResizeObserver) new ResizeObserver(reportHeight).observe(document.body);

  function call(method, path, body) {
    return fetch(api + path, {
      method: method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
        return { status: res.status, body: data, retryAfter: res.headers.get("retry-after") };
      });
    });
  }

  function show(children) {
    root.innerHTML = "";
    children.forEach(function (c) { if (c) root.appendChild(c); });
    var focusable = root.querySelector("[data-autofocus]") || root.querySelector("input, textarea, button");
    if (focusable) focusable.focus();
    reportHeight();
  }

  function errorText(res) {
    if (res.status === 429) return "Too many requests right now. Please try again in " + (res.retryAfter || "a few") + " seconds.";
    if (res.body && res.body.errors) {
      var messages = [];
      Object.keys(res.body.errors).forEach(function (k) { messages = messages.concat(res.body.errors[k]); });
      if (messages.length) return messages.join(" ");
    }
    return (res.body && res.body.error) || "Something went wrong. Please try again.";
  }

  function progress() {
    if (!config.settings.showProgress || !state.total) return null;
    var done = Math.min(state.answered, state.total);
    var pct = Math.round((done / state.total) * 100);
    return el("div", { class: "progress", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": String(state.total), "aria-valuenow": String(done), "aria-label": "Progress" }, [
      el("div", { class: "bar", style: "width:" + pct + "%" }),
      el("span", { class: "progress-text", text: done + " of " + state.total })
    ]);
  }

  // ---- one control per question type; each returns { node, value(), hint } ----
  var controls = {
    text: function (q) {
      var input = q.settings && q.settings.multiline ? el("textarea", { id: "answer", rows: "4", "data-autofocus": true }) : el("input", { id: "answer", type: "text", "data-autofocus": true });
      return { node: input, value: function () { return input.value; }, set: setInput(input), label: "answer" };
    },
    email: function () {
      var input = el("input", { id: "answer", type: "email", autocomplete: "email", "data-autofocus": true });
      return { node: input, value: function () { return input.value.trim(); }, set: setInput(input), label: "answer", hint: function (v) { return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) ? null : "Please enter a valid email address."; } };
    },
    choice: function (q) { return choiceGroup(q, "radio"); },
    multi_choice: function (q) { return choiceGroup(q, "checkbox"); },
    rating: function () { return buttonRow(1, 5, "star"); },
    nps: function () { return buttonRow(0, 10, "nps"); },
    scale: function (q) {
      var min = num(q.settings.min, 1), max = num(q.settings.max, 5);
      if (max - min <= 10) return buttonRow(min, max, "scale");
      return numberInput(min, max);
    },
    slider: function (q) {
      var min = num(q.settings.min, 0), max = num(q.settings.max, 100);
      var start = Math.round((min + max) / 2);
      var output = el("output", { for: "answer", text: String(start) });
      var input = el("input", { id: "answer", type: "range", min: String(min), max: String(max), step: "1", value: String(start), "data-autofocus": true, on: { input: function () { output.textContent = input.value; } } });
      return {
        node: el("div", { class: "slider" }, [el("span", { text: String(min) }), input, el("span", { text: String(max) }), output]),
        value: function () { return Number(input.value); },
        set: function (v) { if (typeof v === "number") { input.value = String(v); output.textContent = input.value; } }
      };
    },
    matrix: function (q) {
      var rows = (q.settings.rows || []).map(String), cols = (q.settings.columns || []).map(String);
      var head = el("tr", null, [el("th", { scope: "col" })].concat(cols.map(function (c) { return el("th", { scope: "col", text: c }); })));
      var body = rows.map(function (r, i) {
        return el("tr", null, [el("th", { scope: "row", text: r })].concat(cols.map(function (c, j) {
          return el("td", null, [el("input", { type: "radio", name: "row" + i, value: c, "aria-label": r + ": " + c, "data-row": r })]);
        })));
      });
      var table = el("table", { class: "matrix" }, [el("thead", null, [head]), el("tbody", null, body)]);
      return {
        node: el("div", { class: "matrix-wrap" }, [table]),
        value: function () {
          var out = {};
          Array.prototype.forEach.call(table.querySelectorAll("input:checked"), function (i) { out[i.getAttribute("data-row")] = i.value; });
          return out;
        },
        set: function (v) {
          if (!v || typeof v !== "object") return;
          Array.prototype.forEach.call(table.querySelectorAll("input"), function (i) { i.checked = v[i.getAttribute("data-row")] === i.value; });
        },
        hint: function (v) { return Object.keys(v).length === rows.length ? null : "Please answer every row."; }
      };
    },
    ranking: function (q) {
      var list = el("ol", { class: "ranking" });
      var dragged = null;
      function move(item, delta) {
        var items = Array.prototype.slice.call(list.children), index = items.indexOf(item), target = index + delta;
        if (target < 0 || target >= items.length) return;
        if (delta < 0) list.insertBefore(item, items[target]); else list.insertBefore(item, items[target].nextSibling);
        item.querySelector(delta < 0 ? ".up" : ".down").focus();
      }
      q.options.forEach(function (option) {
        var item = el("li", { draggable: "true", "data-value": option }, [
          el("span", { class: "grip", "aria-hidden": "true", text: "⋮⋮" }),
          el("span", { class: "label", text: option }),
          el("button", { type: "button", class: "up", "aria-label": "Move " + option + " up", text: "↑", on: { click: function () { move(item, -1); } } }),
          el("button", { type: "button", class: "down", "aria-label": "Move " + option + " down", text: "↓", on: { click: function () { move(item, 1); } } })
        ]);
        item.addEventListener("dragstart", function () { dragged = item; item.classList.add("dragging"); });
        item.addEventListener("dragend", function () { dragged = null; item.classList.remove("dragging"); });
        item.addEventListener("dragover", function (e) { e.preventDefault(); if (dragged && dragged !== item) list.insertBefore(dragged, item); });
        list.appendChild(item);
      });
      return {
        node: list,
        value: function () { return Array.prototype.map.call(list.children, function (li) { return li.getAttribute("data-value"); }); },
        set: function (v) {
          if (!Array.isArray(v)) return;
          v.forEach(function (option) {
            var item = Array.prototype.filter.call(list.children, function (li) { return li.getAttribute("data-value") === option; })[0];
            if (item) list.appendChild(item);
          });
        }
      };
    },
    yes_no: function () {
      var chosen = null;
      var yes = el("button", { type: "button", class: "choice-btn", "aria-pressed": "false", text: "Yes", "data-value": "yes" });
      var no = el("button", { type: "button", class: "choice-btn", "aria-pressed": "false", text: "No", "data-value": "no" });
      function select(value) { chosen = value; yes.setAttribute("aria-pressed", String(chosen)); no.setAttribute("aria-pressed", String(!chosen)); }
      [yes, no].forEach(function (b) { b.addEventListener("click", function () { select(b === yes); }); });
      return { node: el("div", { class: "row", role: "group" }, [yes, no]), value: function () { return chosen; }, set: function (v) { if (typeof v === "boolean") select(v); }, hint: function (v) { return v === null ? "Please choose yes or no." : null; } };
    },
    date: function () {
      var input = el("input", { id: "answer", type: "date", "data-autofocus": true });
      return { node: input, value: function () { return input.value; }, set: setInput(input), label: "answer", hint: function (v) { return /^\d{4}-\d{2}-\d{2}$/.test(v) ? null : "Please pick a date."; } };
    }
  };

  function num(v, fallback) { return typeof v === "number" && isFinite(v) ? v : fallback; }

  /** Pre-fills a text-like input with an earlier answer (after going back). */
  function setInput(input) { return function (v) { if (typeof v === "string" || typeof v === "number") input.value = String(v); }; }

  // Stars are drawn, not typed: an outline until chosen, filled up to the chosen value. A text
  // glyph (U+2605) takes whatever colour and presentation the platform's font gives it, which is how
  // every star could look chosen before any choice.
  function starIcon() {
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    var path = document.createElementNS(SVG, "path");
    path.setAttribute("d", "M12 2.6l2.9 5.9 6.5.95-4.7 4.6 1.1 6.5L12 17.5l-5.8 3.05 1.1-6.5-4.7-4.6 6.5-.95z");
    svg.appendChild(path);
    return svg;
  }

  function choiceGroup(q, kind) {
    var name = "choice-" + q.id;
    var group = el("div", { class: "choices", role: kind === "radio" ? "radiogroup" : "group" }, q.options.map(function (option, i) {
      var id = name + "-" + i;
      return el("label", { class: "choice", for: id }, [el("input", { type: kind, id: id, name: name, value: option }), el("span", { text: option })]);
    }));
    return {
      node: group,
      set: function (v) {
        var chosen = Array.isArray(v) ? v : [v];
        Array.prototype.forEach.call(group.querySelectorAll("input"), function (i) { i.checked = chosen.indexOf(i.value) !== -1; });
      },
      value: function () {
        var checked = Array.prototype.map.call(group.querySelectorAll("input:checked"), function (i) { return i.value; });
        return kind === "radio" ? (checked[0] === undefined ? null : checked[0]) : checked;
      },
      hint: function (v) { return kind === "radio" && v === null ? "Please choose an option." : null; }
    };
  }

  function buttonRow(min, max, kind) {
    var chosen = null, buttons = [];
    function select(value) {
      chosen = value;
      buttons.forEach(function (other) {
        var v = Number(other.getAttribute("data-value"));
        other.setAttribute("aria-pressed", String(v === value));
        if (kind === "star") other.classList.toggle("lit", v <= value);
      });
    }
    for (var n = min; n <= max; n++) (function (value) {
      var b = el("button", { type: "button", class: "choice-btn " + kind, "aria-pressed": "false", "aria-label": kind === "star" ? value + " star" + (value > 1 ? "s" : "") : String(value), "data-value": String(value), text: kind === "star" ? null : String(value) });
      if (kind === "star") b.appendChild(starIcon());
      b.addEventListener("click", function () { select(value); });
      buttons.push(b);
    })(n);
    var labels = kind === "nps" ? el("div", { class: "scale-labels" }, [el("span", { text: "Not likely" }), el("span", { text: "Very likely" })]) : null;
    return {
      node: el("div", null, [el("div", { class: "row " + kind + "-row", role: "group" }, buttons), labels]),
      value: function () { return chosen; },
      set: function (v) { if (typeof v === "number" && v >= min && v <= max) select(v); },
      hint: function (v) { return v === null ? "Please choose a value." : null; }
    };
  }

  function numberInput(min, max) {
    var input = el("input", { id: "answer", type: "number", min: String(min), max: String(max), step: "1", "data-autofocus": true });
    return { node: input, value: function () { return input.value === "" ? null : Number(input.value); }, set: setInput(input), label: "answer", hint: function (v) { return v === null || v < min || v > max ? "Please enter a number from " + min + " to " + max + "." : null; } };
  }

  // ---- screens ----
  function renderStart() {
    var resume = sessionStorage.getItem(storageKey);
    if (resume) return call("GET", "/responses/" + encodeURIComponent(resume)).then(function (res) {
      if (res.status === 200 && res.body.data.status === "in_progress") return applyState(res.body.data);
      sessionStorage.removeItem(storageKey);
      renderWelcome();
    });
    renderWelcome();
  }

  function renderWelcome() {
    var message = el("p", { class: "error", role: "alert" });
    var start = el("button", { type: "button", class: "primary", "data-autofocus": true, text: config.settings.labels.start });
    start.addEventListener("click", function () {
      start.disabled = true;
      call("POST", "/responses", {}).then(function (res) {
        if (res.status !== 201) { start.disabled = false; message.textContent = errorText(res); reportHeight(); return; }
        sessionStorage.setItem(storageKey, res.body.data.id);
        applyState(res.body.data);
      }, function () { start.disabled = false; message.textContent = "Network error. Please try again."; });
    });
    show([el("h1", { text: config.name }), config.description ? el("p", { text: config.description }) : null, message, start]);
  }

  function applyState(data) {
    state.responseId = data.id;
    state.answered = data.answered_count;
    state.canGoBack = data.can_go_back === true;
    state.previous = data.previous_answer || null;
    if (data.finished || !data.next_question) return complete();
    state.question = data.next_question;
    renderQuestion(data.next_question);
  }

  // Back: the server cuts the path before the previous question and discards the answers after
  // it, so branching is walked again from the changed answer; the earlier answer comes back as
  // previous_answer and pre-fills the control.
  function goBack(button, error) {
    button.disabled = true;
    call("POST", "/responses/" + encodeURIComponent(state.responseId) + "/back").then(function (res) {
      button.disabled = false;
      if (res.status === 200) return applyState(res.body.data);
      error.textContent = errorText(res);
      reportHeight();
    }, function () { button.disabled = false; error.textContent = "Network error. Please try again."; });
  }

  function renderQuestion(q) {
    var control = (controls[q.type] || controls.text)(q);
    if (state.previous && control.set) control.set(state.previous.value);
    var error = el("p", { class: "error", id: "error", role: "alert" });
    var submit = el("button", { type: "submit", class: "primary", text: state.answered + 1 >= state.total ? config.settings.labels.submit : config.settings.labels.next });
    var backButton = state.canGoBack ? el("button", { type: "button", class: "secondary back", text: config.settings.labels.back }) : null;
    if (backButton) backButton.addEventListener("click", function () { goBack(backButton, error); });
    var title = el("legend", { class: "title", text: q.title });
    var form = el("form", { novalidate: true, "aria-describedby": "error" }, [
      el("fieldset", null, [title, q.description ? el("p", { class: "description", text: q.description }) : null, control.node]),
      error,
      el("div", { class: "actions" }, [backButton, submit])
    ]);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var value = control.value();
      var hint = control.hint ? control.hint(value) : (value === "" ? "Please answer this question." : null);
      if (hint) { error.textContent = hint; reportHeight(); return; }
      submit.disabled = true;
      call("POST", "/responses/" + encodeURIComponent(state.responseId) + "/answers", { question_id: q.id, value: value }).then(function (res) {
        submit.disabled = false;
        if (res.status === 200) return applyState(res.body.data);
        if (res.status === 409 && res.body && res.body.expected_question_id) {
          return call("GET", "/responses/" + encodeURIComponent(state.responseId)).then(function (r) { if (r.status === 200) applyState(r.body.data); });
        }
        error.textContent = errorText(res);
        reportHeight();
      }, function () { submit.disabled = false; error.textContent = "Network error. Please try again."; });
    });
    show([el("h1", { class: "survey-name", text: config.name }), progress(), form]);
  }

  function complete() {
    return call("POST", "/responses/" + encodeURIComponent(state.responseId) + "/complete").then(function (res) {
      if (res.status !== 200) {
        var retry = el("button", { type: "button", class: "primary", text: "Try again", on: { click: complete } });
        show([el("p", { class: "error", role: "alert", text: errorText(res) }), retry]);
        return;
      }
      sessionStorage.removeItem(storageKey);
      state.answered = state.total;
      show([el("div", { class: "done", "data-state": "completed" }, [el("h1", { text: "✓" }), el("p", { class: "thanks", text: config.settings.thankYou })])]);
      post("response.completed", { response_id: state.responseId, redirect_url: config.settings.redirectUrl });
      // Inside an embed the host page follows the redirect (embed.js); a cross-origin frame may not.
      if (config.settings.redirectUrl && !embedded) {
        setTimeout(function () { window.location.href = config.settings.redirectUrl; }, config.settings.redirectDelay * 1000);
      }
    });
  }

  renderStart();
})();
`;
