// The problem page's scratch part (issue 20). Started by main.js after initProblem; it hears
// "judge:done" (detail: the finished submission) on document.
export function initScratch(_data) {}
