// The browser's copy of kb_tools/search/tokens.py: the same tokens for a question as the
// index holds for a page (Chinese as overlapping character pairs, identifiers whole plus
// their pieces, English lower-cased and lightly stemmed). tests/test_site_browser.py runs
// both on the same texts. It defines splitQuery, which Sphinx's search page calls.
var OPKB_WORD = /(?:(?![A-Za-z])[\p{L}\p{M}\p{Nl}\p{No}])+|[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*(?:['\u2019][A-Za-z]+)?/gu;
var OPKB_CAMEL = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;
var OPKB_STOP_WORDS = new Set(("a an and are as at be been but by can could do does did for from had has have how i if in into is it its " +
  "me my no not of on or our should so than that the their them then there these they this those to too us " +
  "was we were what when where which while who why will with would you your also any each may must only " +
  "get got use used using just " +
  "doesn isn aren wasn weren don didn won couldn shouldn wouldn hasn haven hadn").split(" "));
var OPKB_STOP_PAIRS = new Set("怎么 什么 为什么 如何 是否 可以 吗 呢 的 了 一个 哪个 哪些 应该 需要 是不 不是 怎样 么办".split(" "));

function opkbStem(word) {
  const ends = (...xs) => xs.some((x) => word.endsWith(x));
  if (word.length > 4 && word.endsWith("ies")) return word.slice(0, -3) + "y";
  if (word.length > 4 && ends("sses", "ses", "xes", "ches", "shes")) word = word.slice(0, -2);
  else if (word.length > 3 && word.endsWith("s") && !ends("ss", "us", "is", "as")) word = word.slice(0, -1);
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  return word;
}

function opkbIsIdentifier(word) {
  return /[0-9._]/.test(word) || /[A-Z]/.test(word.slice(1));
}

function opkbIsCjk(c) {
  return (c >= "\u3040" && c <= "\u9fff") || (c >= "\uf900" && c <= "\ufaff") || (c >= "\uac00" && c <= "\ud7af");
}

function opkbPairs(run) {
  if (run.length === 1) return OPKB_STOP_PAIRS.has(run) ? [] : [run];
  const out = [];
  for (let i = 0; i < run.length - 1; i++) {
    const p = run.slice(i, i + 2);
    if (!OPKB_STOP_PAIRS.has(p)) out.push(p);
  }
  return out;
}

function opkbWordTokens(word) {
  word = word.split(/['\u2019]/)[0];
  if (!/^[\x00-\x7f]*$/.test(word)) {
    const out = [];
    let start = 0;
    for (let i = 1; i <= word.length; i++) {
      if (i === word.length || opkbIsCjk(word[i]) !== opkbIsCjk(word[start])) {
        const stretch = word.slice(start, i);
        if (opkbIsCjk(stretch[0])) out.push(...opkbPairs(stretch));
        else out.push(stretch.toLowerCase());
        start = i;
      }
    }
    return out;
  }
  const lower = word.toLowerCase();
  if (!opkbIsIdentifier(word)) return OPKB_STOP_WORDS.has(lower) ? [] : [opkbStem(lower)];
  const out = [lower];
  for (const part of word.split(/[._]/)) {
    for (let piece of part.match(OPKB_CAMEL) || []) {
      piece = piece.toLowerCase();
      if (piece.length > 1 && !/^[0-9]+$/.test(piece) && !OPKB_STOP_WORDS.has(piece) && opkbStem(piece) !== lower) {
        out.push(opkbStem(piece));
      }
    }
  }
  return out;
}

function opkbWords(text) {
  return text.match(OPKB_WORD) || [];
}

function opkbKeyTokens(word) {
  const toks = opkbWordTokens(word);
  return opkbIsIdentifier(word) ? toks.slice(0, 1) : toks;
}

function opkbTokens(text) {
  return opkbWords(text).flatMap(opkbWordTokens);
}

// Sphinx's search page drops a query word made only of digits, so the site's index holds
// a number as "#561103" (kb_tools/outputs/site_search.py) and the query asks it so.
function splitQuery(query) {
  return [...new Set(opkbTokens(query).map((t) => (/^[0-9]+$/.test(t) ? "#" + t : t)))];
}

if (typeof module !== "undefined") module.exports = { opkbTokens, opkbWords, opkbWordTokens, opkbKeyTokens, opkbIsCjk, splitQuery };
