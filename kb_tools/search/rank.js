// The browser's copy of kb_tools/search/rank.py, with the exact-task lookup of answer.py and
// kb/router.py: it ranks the data that kb_tools/search/browser_index.py reads out of kbt route's
// own index, with the tokens of tokens.js (loaded first). FTS5's bm25() is computed the way
// SQLite computes it (fts5_aux.c: k1 1.2, b 0.75, an IDF at or below zero clamped to 1e-6, each
// instance of a token counting its column's weight, the row's length over all columns).
// tests/test_site_ask.py asks both the same questions and compares the pages, in order.

function opkbDistinct(xs) {
  return [...new Set(xs)];
}

function opkbPrepared(index) {
  // what FTS5 keeps beside its table: each row's length, the mean length, where each token is
  if (index.prepared) return index.prepared;
  const postings = new Map();
  const sizes = [];
  let total = 0;
  index.pages.forEach((page, at) => {
    let size = 0;
    const vocab = new Set();
    for (const counts of page.columns) {
      for (const [token, count] of Object.entries(counts)) {
        size += count;
        vocab.add(token);
      }
    }
    for (const token of vocab) {
      if (!postings.has(token)) postings.set(token, []);
      postings.get(token).push(at);
    }
    page.vocab = vocab;
    sizes.push(size);
    total += size;
  });
  const byPath = new Map(index.pages.map((page) => [page.path, page]));
  index.prepared = { postings, sizes, avgdl: total / index.pages.length, byPath };
  return index.prepared;
}

function opkbBm25(index, toks) {
  // page position -> -bm25(docs, weights...) for a query "t1" OR "t2" OR ...
  const scores = new Map();
  if (!toks.length) return scores;
  const { postings, sizes, avgdl } = opkbPrepared(index);
  const k1 = 1.2, b = 0.75, rows = index.pages.length;
  const idf = toks.map((t) => {
    const hits = (postings.get(t) || []).length;
    const value = Math.log((rows - hits + 0.5) / (hits + 0.5));
    return value <= 0.0 ? 1e-6 : value;
  });
  const matching = new Set(toks.flatMap((t) => postings.get(t) || []));
  for (const at of matching) {
    const columns = index.pages[at].columns;
    let score = 0.0;
    toks.forEach((t, i) => {
      let freq = 0.0;
      columns.forEach((counts, c) => { freq += index.weights[c] * (counts[t] || 0); });
      score += idf[i] * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - b + b * sizes[at] / avgdl)));
    });
    scores.set(at, score);
  }
  return scores;
}

function opkbExpansion(index, asked) {
  // [tokens to add, every [name, key tokens] of the glossary entries the question names]
  const extra = [], namesUsed = [];
  for (const names of index.glossary) {
    if (names.some(([, toks]) => toks.length && toks.every((t) => asked.has(t)))) {
      namesUsed.push(...names);
      for (const [, toks] of names) extra.push(...toks.filter((t) => !asked.has(t)));
    }
  }
  return [opkbDistinct(extra), namesUsed];
}

function opkbCoordination(index, queryWords) {
  // [page position -> share of the question's key tokens it has, the share of one with none]
  const asked = opkbDistinct(queryWords.flatMap(opkbKeyTokens));
  if (!asked.length) return [new Map(), 1.0];
  const { postings } = opkbPrepared(index);
  const have = new Map();
  for (const t of asked) for (const at of postings.get(t) || []) have.set(at, (have.get(at) || 0) + 1);
  return [new Map([...have].map(([at, count]) => [at, count / asked.length])), 0.5 / asked.length];
}

function opkbTaskBonus(index, queryTokens) {
  const asked = new Set(queryTokens);
  const at = new Map(index.pages.map((page, i) => [page.path, i]));
  const best = new Map();
  for (const task of index.tasks) {
    const shared = task.said.filter((t) => asked.has(t)).length;
    if (!task.said.length || shared < Math.min(2, task.said.length)) continue;
    const bonus = index.task_weight * shared / task.said.length;
    for (const ref of task.refs) {
      const i = at.get("kb/" + ref);
      if (i !== undefined && bonus > (best.get(i) || 0.0)) best.set(i, bonus);
    }
  }
  return best;
}

function opkbCjkStretches(run, pageTokens) {
  const covered = new Array(run.length).fill(false);
  for (let i = 0; i < run.length - 1; i++) {
    if (pageTokens.has(run.slice(i, i + 2))) covered[i] = covered[i + 1] = true;
  }
  const stretches = [];
  let start = null;
  [...covered, false].forEach((hit, i) => {
    if (hit && start === null) start = i;
    else if (!hit && start !== null) { stretches.push(run.slice(start, i)); start = null; }
  });
  return stretches;
}

function opkbMatchedWords(queryWords, pageTokens) {
  const out = [];
  for (const word of queryWords) {
    const toks = opkbWordTokens(word);
    if (!toks.length) continue;
    if (word.length > 1 && [...word].every(opkbIsCjk)) out.push(...opkbCjkStretches(word, pageTokens));
    else if (toks.some((t) => pageTokens.has(t))) out.push(word);
  }
  return opkbDistinct(out);
}

function opkbSearch(index, query, limit) {
  // the best `limit` pages for `query`, best first: [{id, path, title, score, matched, tasks}]
  const queryWords = opkbWords(query);
  const queryTokens = opkbDistinct(queryWords.flatMap(opkbWordTokens)).slice(0, index.max_query_tokens);
  const asked = new Set(queryWords.flatMap(opkbKeyTokens));
  let [extra, usedNames] = opkbExpansion(index, asked);
  const inQuery = new Set(queryTokens);
  extra = extra.filter((t) => !inQuery.has(t));
  const [shares, floor] = opkbCoordination(index, queryWords);
  const scores = new Map();
  for (const [at, s] of opkbBm25(index, queryTokens)) scores.set(at, s * (shares.has(at) ? shares.get(at) : floor));
  for (const [at, s] of opkbBm25(index, extra)) scores.set(at, (scores.get(at) || 0.0) + index.expansion_weight * s);
  const top = Math.max(0.0, ...scores.values());
  if (top > 0) for (const [at, s] of scores) scores.set(at, s / top);
  for (const [at, bonus] of opkbTaskBonus(index, queryTokens)) scores.set(at, (scores.get(at) || 0.0) + bonus);
  const ranked = [...scores].sort((x, y) => y[1] - x[1] || index.pages[x[0]].n - index.pages[y[0]].n);
  const wanted = [...queryTokens, ...extra];
  return ranked.slice(0, limit).map(([at, score]) => {
    const page = index.pages[at];
    const pageTokens = new Set(wanted.filter((t) => page.vocab.has(t)));
    const matched = opkbMatchedWords(queryWords, pageTokens);
    const found = opkbDistinct(usedNames.filter(([name, toks]) =>
      !matched.includes(name) && toks.length && toks.every((t) => pageTokens.has(t))).map(([name]) => name));
    matched.push(...found.slice(0, index.max_glossary_shown));
    return { id: page.id, path: page.path, title: page.title, score: Number(score.toFixed(3)), matched, tasks: page.tasks };
  });
}

function opkbSlug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
}

function opkbFindTask(index, query) {
  // a task by id, exact wording, or the slug of the wording (case-insensitive)
  const q = query.trim();
  return index.tasks.find((task) => q === task.id || q.toLowerCase() === task.wording.toLowerCase()
    || opkbSlug(q) === opkbSlug(task.wording)) || null;
}

function opkbQueryProblem(index, text) {
  // why the question cannot be asked (kbt route refuses it with the same reason), or null
  if (text.length > index.max_query_chars) {
    return `the question is ${text.length} characters, over the ${index.max_query_chars}-character limit; paste the error line, not the whole log`;
  }
  if (/[\x00-\x08\x0b\x0c\x0e-\x1f]/.test(text)) return "the question is binary data (control bytes), not text";
  if (!text.trim()) return "the question is empty: give a task id, a task's wording or any question";
  return null;
}

function opkbAsk(index, question, limit) {
  // what kbt route answers: {task, hits}, the task's pages in its order when one is named exactly;
  // {error} for a question it refuses
  opkbPrepared(index);
  const problem = opkbQueryProblem(index, question);
  if (problem) return { error: problem, task: null, hits: [] };
  const query = question.trim();
  const task = opkbFindTask(index, query);
  if (task === null) return { task: null, hits: opkbSearch(index, query, limit || 5) };
  const hits = task.refs.map((ref) => {
    const page = index.prepared.byPath.get("kb/" + ref);
    return page
      ? { id: page.id, path: page.path, title: page.title, score: null, matched: [task.id], tasks: page.tasks }
      : { id: ref.split("/").pop().replace(/\.[^.]*$/, ""), path: "kb/" + ref, title: null, score: null, matched: [task.id], tasks: [] };
  });
  return { task, hits };
}

if (typeof module !== "undefined") module.exports = { opkbAsk, opkbSearch, opkbFindTask };
