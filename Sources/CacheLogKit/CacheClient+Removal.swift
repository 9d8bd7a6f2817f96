extension CacheClient {
    /// Removes what is cached under `key` (TanStack Query's `removeQueries`, Apollo's `evict`):
    /// a delete in the log, with the reason `explicit`, so that the history says someone asked.
    /// The next load of the key asks the remote. Creates nothing.
    ///
    /// - Returns: whether there was a cache to remove; `false` records nothing.
    /// - Throws: `CacheLogError` when the key is one no database can hold, or the log fails.
    @discardableResult
    public func remove(_ key: String) async throws -> Bool {
        guard let log = try opener.existingForWriting() else { return false }
        return try await !log.deleteLive([key]).isEmpty
    }

    /// Removes every cache in the database (feeds, searches, objects, images) in one append:
    /// each key a delete with the reason `explicit`; the history stays, as retention keeps it.
    ///
    /// - Returns: the keys removed.
    @discardableResult
    public func removeAll() async throws -> [String] {
        guard let log = try opener.existingForWriting() else { return [] }
        return try await log.deleteLive(log.state().entries.map(\.key))
    }
}
