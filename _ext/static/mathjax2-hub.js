/* deepnotes: the widget manager typesets math in widget output with MathJax 2's API,
   MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]); the book loads MathJax 3, which has no Hub, so
   every slider move threw "Cannot read properties of undefined (reading 'Queue')" and its math stayed
   raw. Whatever object window.MathJax is (the configuration first, MathJax 3 itself once loaded), it gets
   a Hub whose Queue hands the element to MathJax 3's typesetPromise. */
(function () {
  function typeset(args) {
    const mj = window.MathJax;
    if (!mj || typeof mj.typesetPromise !== "function") return; // not loaded yet: its startup typesets the page
    const element = Array.isArray(args) ? args[2] : undefined;
    mj.typesetPromise(element instanceof Element ? [element] : undefined).catch(function () {});
  }
  const hub = { Queue: function () { Array.prototype.forEach.call(arguments, typeset); } };
  function withHub(mj) {
    if (mj && typeof mj === "object" && !("Hub" in mj)) {
      Object.defineProperty(mj, "Hub", { value: hub, enumerable: false, configurable: true, writable: true });
    }
    return mj;
  }
  let current = withHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    enumerable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); },
  });
})();
