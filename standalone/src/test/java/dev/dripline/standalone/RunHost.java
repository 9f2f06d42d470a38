package dev.dripline.standalone;

/**
 * What a {@link FaultRun} creates its run through and checks it with: the API of the Dripline
 * serving now (during an upgrade, first the previous release's, then this one's) and SQL on the
 * database it uses.
 */
interface RunHost {
  Api api();

  Sql sql();
}
