internal import CLMDB

/// A handle to one named database (a table) of an environment: valid for the environment's
/// life once the transaction that opened it has committed.
struct Table: Sendable, Equatable {
    let handle: MDB_dbi
}
