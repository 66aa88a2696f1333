// The site's Ask page (kb_tools/search/askpage.py): its question box, answered in the page by
// rank.js over the index the site was built with, listed as `kbt route` lists it. A question in
// the address (ask.html?q=...) is asked on load, so that an answer can be linked.
(function () {
  const form = document.getElementById("opkb-ask");
  const out = document.getElementById("opkb-ask-answer");
  if (!form || !out || typeof OPKB_ASK_INDEX === "undefined") return;
  const box = form.querySelector("input");
  const limit = Number(form.dataset.limit) || 5;

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function show(question) {
    out.replaceChildren();
    const result = opkbAsk(OPKB_ASK_INDEX, question, limit);
    if (result.error) {
      out.append(element("p", result.error, "opkb-ask-none"));
      return;
    }
    const task = result.task;
    if (!result.hits.length) {
      const none = element("p", `No page matches "${question.trim()}". Try other words, or find the task in `, "opkb-ask-none");
      const router = element("a", "the router");
      router.href = "router.html";
      none.append(router, ".");
      out.append(none);
      return;
    }
    out.append(element("p", task ? `${task.wording} [${task.id}]: skills ${task.skills.join(", ")}`
      : `Pages for "${question.trim()}", best first:`, "opkb-ask-head"));
    const list = element("ol", undefined, "opkb-ask-hits");
    for (const hit of result.hits) {
      const item = element("li");
      const link = element("a", hit.title || `${hit.path} (missing page)`);
      link.href = hit.path.replace(/\.md$/, ".html");
      const detail = task ? [] : [`score ${hit.score}`, `matched: ${hit.matched.join(", ") || "-"}`];
      if (!task && hit.tasks.length) detail.push(`tasks: ${hit.tasks.join(", ")}`);
      item.append(link, element("code", hit.path, "opkb-ask-path"));
      if (detail.length) item.append(element("div", detail.join(" · "), "opkb-ask-detail"));
      list.append(item);
    }
    out.append(list);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    try {
      history.replaceState(null, "", "?q=" + encodeURIComponent(box.value));
    } catch (err) {
      // a page opened from disk may refuse a new address; the answer is shown all the same
    }
    show(box.value);
  });
  const asked = new URLSearchParams(location.search).get("q");
  if (asked) {
    box.value = asked;
    show(asked);
  }
})();
