extension Environment {
    /// Which commit a read sees. With the lock file, every read sees the newest; the choice is
    /// what a reader without it (``unlocked``) pays for that: a copy of the data file.
    enum Recency {
        /// The newest commit when the read begins: without the lock file, the data file is
        /// copied again first when it has a newer commit than the copy.
        case newest
        /// The commit the environment holds: without the lock file, the copy as it is, no older
        /// than what any earlier read saw. For the later reads of one operation whose first read
        /// fixed what it reads (the next chunk of a scan): they copy nothing.
        case held
    }
}
