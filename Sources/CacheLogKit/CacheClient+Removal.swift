extension CacheClient {
    /// Removes what is cached under `key`.
    ///
    /// It is TanStack Query's `removeQueries` and Apollo's `evict`: a delete in the log, with the
    /// reason `explicit`, so that the history says someone asked. The next load of the key asks
    /// the remote. Creates nothing.
    ///
    /// A load of the key under way when the removal commits still answers its callers, but its
    /// save is refused: what was fetched before the removal does not bring the cache back. Loads
    /// that begin later start their own request. Keys are compared as the log stores them,
    /// byte for byte: two spellings of one text (NFC and NFD) are two keys.
    ///
    /// - Parameter key: The cache key.
    /// - Returns: whether there was a cache to remove; `false` records nothing.
    /// - Throws: `CacheLogError` when the key is one no database can hold, or the log fails.
    @discardableResult
    public func remove(_ key: String) async throws -> Bool {
        guard let log = try opener.existingForWriting() else { return false }
        defer { inFlight.startAfresh(key) }
        return try await !log.deleteLive([key]).isEmpty
    }

    /// Removes every cache in the database (feeds, searches, objects, images) in one append:
    /// each key a delete with the reason `explicit`; the history stays, as retention keeps it.
    ///
    /// - Returns: the keys removed.
    /// - Throws: `CacheLogError` when the log fails.
    @discardableResult
    public func removeAll() async throws -> [String] {
        guard let log = try opener.existingForWriting() else { return [] }
        let removed = try await log.deleteLive(log.state().entries.map(\.key))
        for key in removed { inFlight.startAfresh(key) }
        return removed
    }
}
