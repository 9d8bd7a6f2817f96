/// The numbers retention runs by, in one place (Format.md, "Retention", says what each does).
enum RetentionTuning {
    /// Records one slice visits at most: a slice is one short write transaction, so that the
    /// writer can put appends between slices and none waits long.
    static let sliceRecords = 2_048
    /// How far the database may fill under a pressing size limit before retention stops
    /// trimming: a margin below the limit, so that the next saves do not start it again at once.
    static let pressureTarget = 0.9
    /// Between passes, one is due when the database grew this much since the last one ended…
    static let growthBetweenPasses = 0.1
    /// …plus this many bytes…
    static let growthAllowance = 65_536
    /// …or this long passed (windows are measured in hours and days).
    static let timeBetweenPasses: Double = 3_600
    /// The least of its own pages a database needs beside a save (LMDB's meta pages, the roots
    /// of its tables, the policy's record): a save that cannot fit in the limit beside them is
    /// refused before anything is written.
    static let minimumFloor = 64 * 1_024
}
