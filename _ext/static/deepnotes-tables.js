// deepnotes: a table of the text (a Markdown table a cell printed, the ledger's coverage) names each of its cells
// by its column (data-label, from the table's head), so that deepnotes.css can show it on a phone as a card per
// row, each cell on its own line, instead of a table wider than the column (issue 48). The verdict and ledger
// tables carry their own labels. Without this script (Jupyter, Colab) the tables stay as they are.
document.addEventListener("DOMContentLoaded", () => {
  for (const table of document.querySelectorAll("article table")) {
    if (table.matches(".verdicts, .ledger")) continue;
    const head = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
    if (head.length < 2) continue;
    table.classList.add("deepnotes-cards");
    for (const row of table.querySelectorAll("tbody tr")) {
      [...row.children].forEach((cell, i) => {
        if (head[i]) cell.dataset.label = head[i];
      });
    }
  }
});
