package dev.dripline.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table: a header row and rows of cells, each column as wide as its widest cell, two
 * spaces apart, the last column unpadded.
 */
final class Table {
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  Table(String... header) {
    this.header = List.of(header);
  }

  /** Adds a row; a {@code null} cell prints as {@code -}. */
  Table row(Object... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException(
          "a row of " + cells.length + " cells in a table of " + header.size() + " columns");
    }
    rows.add(Arrays.stream(cells).map(cell -> cell == null ? "-" : cell.toString()).toList());
    return this;
  }

  boolean isEmpty() {
    return rows.isEmpty();
  }

  void print(PrintWriter out) {
    int[] widths = new int[header.size()];
    for (List<String> row : allRows()) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    for (List<String> row : allRows()) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        String cell = row.get(i);
        line.append(cell);
        if (i < row.size() - 1) {
          line.append(" ".repeat(widths[i] - cell.length() + 2));
        }
      }
      out.println(line.toString().stripTrailing());
    }
  }

  private List<List<String>> allRows() {
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    return all;
  }
}
