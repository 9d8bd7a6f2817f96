#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How much history a database keeps and how many bytes it may use: the rule that keeps an
/// append-only log small by itself.
///
/// It is recorded in the log (a ``EventKind/retention`` event, as EventStoreDB records a stream's
/// `$maxAge` as metadata), so every process that writes the database applies the same rule and
/// `replay` shows when, and by whom, it changed. A database that records none follows
/// ``default``.
///
/// The writer applies it as it goes, in short slices (each its own write transaction). What goes,
/// in order: history older than its key's window; then, while the database is over ``sizeLimit``,
/// the oldest history inside the windows; then, only when live caches alone exceed the limit,
/// live entries, the least recently saved first, each with a `delete` whose reason is
/// ``Event/DeletionReason/evicted``. History is what the live caches do not need: a record stays
/// while it is a key's live put, the version a key's history now starts from, or holds bytes a
/// kept record refers to.
public struct RetentionPolicy: Sendable, Hashable {
    /// How long a key's history is kept, in seconds; `nil` keeps it for ever.
    public var history: TimeInterval?
    /// The most bytes the database may use (its pages in use); `nil` for no limit.
    public var sizeLimit: Int?
    /// Windows for some keys instead of ``history``; the first that matches a key wins (the tool
    /// records its key prefixes before its contracts).
    public var overrides: [Override]

    /// A window for the keys that match.
    public struct Override: Sendable, Hashable {
        /// Which keys it covers.
        public var match: Match
        /// How long their history is kept, in seconds (0: no history, only the live cache).
        public var history: TimeInterval

        /// A window of `history` seconds for the keys `match` names.
        public init(_ match: Match, history: TimeInterval) {
            self.match = match
            self.history = history
        }
    }

    /// How an override names its keys.
    public enum Match: Sendable, Hashable {
        /// Keys that start with these bytes (`image:` for every image).
        case keyPrefix(String)
        /// Keys whose live put records this contract name (the metadata entry `contract`).
        case contract(String)
    }

    /// A policy keeping `history` seconds of each key's history (nil: for ever) within
    /// `sizeLimit` bytes (nil: no limit), with `overrides` for some keys.
    public init(history: TimeInterval?, sizeLimit: Int?, overrides: [Override] = []) {
        self.history = history
        self.sizeLimit = sizeLimit
        self.overrides = overrides
    }

    /// What a database that records no policy follows: 30 days of history and 256 MiB. A cache
    /// that is refreshed every five minutes with a 46 KB feed stays under a few megabytes.
    public static let `default` = RetentionPolicy(history: 30 * 86_400, sizeLimit: 256 << 20)

    /// The longest window allowed: 100 years, as for max ages.
    public static let maximumHistory: TimeInterval = 36_500 * 86_400

    /// The most overrides a policy takes.
    public static let maximumOverrides = 64

    /// The longest key prefix or contract name an override takes: the longest key LMDB stores.
    public static let maximumOverrideBytes = 511

    /// The smallest size limit allowed: a database under it could not hold its own tables.
    public static let minimumSizeLimit = 1 << 20

    /// The window of `key`, whose live put records `contract`.
    public func history(forKey key: String, contract: String?) -> TimeInterval? {
        for override in overrides {
            switch override.match {
            case .keyPrefix(let prefix) where key.utf8.starts(with: prefix.utf8): return override.history
            case .contract(let name) where contract == name: return override.history
            default: continue
            }
        }
        return history
    }

    /// What is wrong with this policy, as a sentence; `nil` when it can be recorded.
    public var problem: String? {
        if let history, !(0...Self.maximumHistory).contains(history) { return "the history window must be 0 to 36500d" }
        if let sizeLimit, sizeLimit < Self.minimumSizeLimit { return "the size limit must be at least 1 MiB" }
        // Bounded so that the policy's record always fits in a record's metadata.
        if overrides.count > Self.maximumOverrides { return "a policy takes at most \(Self.maximumOverrides) overrides, not \(overrides.count)" }
        var seen: Set<Match> = []
        for override in overrides {
            guard (0...Self.maximumHistory).contains(override.history) else { return "an override's window must be 0 to 36500d" }
            switch override.match {
            case .keyPrefix(let prefix) where prefix.isEmpty: return "an override's key prefix must not be empty"
            case .contract(let name) where name.isEmpty: return "an override's contract must not be empty"
            case .keyPrefix(let name), .contract(let name):
                // No key is longer: a longer prefix could never match.
                if name.utf8.count > Self.maximumOverrideBytes {
                    return "an override's key prefix or contract must be at most \(Self.maximumOverrideBytes) bytes, as keys are, not \(name.utf8.count)"
                }
            }
            guard seen.insert(override.match).inserted else {
                switch override.match {
                case .keyPrefix(let prefix): return "two overrides name the key prefix '\(prefix)': give each once"
                case .contract(let name): return "two overrides name the contract '\(name)': give each once"
                }
            }
        }
        return nil
    }
}

extension RetentionPolicy {
    /// A size as people write it: a whole number and a unit, decimal (`KB`, `MB`, `GB`) or binary
    /// (`KiB`, `MiB`, `GiB`), or bytes alone (`1048576`, `B`); `nil` for anything else, or a size
    /// beyond what a file can be.
    public static func size(_ text: String) -> Int? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let number = Int(digits) else { return nil }
        let unit = text.dropFirst(digits.count)
        let scale: Int
        switch unit {
        case "", "B": scale = 1
        case "KB": scale = 1_000
        case "MB": scale = 1_000_000
        case "GB": scale = 1_000_000_000
        case "KiB": scale = 1 << 10
        case "MiB": scale = 1 << 20
        case "GiB": scale = 1 << 30
        default: return nil
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow || bytes > 1 << 50 ? nil : bytes
    }

    /// `bytes` as ``size(_:)`` reads it back, in the unit that writes it with the fewest digits
    /// (`64MB` for 64,000,000, `64MiB` for 67,108,864), else bytes (`1234567`).
    package static func sizeText(_ bytes: Int) -> String {
        let units: [(String, Int)] = [("GiB", 1 << 30), ("GB", 1_000_000_000), ("MiB", 1 << 20), ("MB", 1_000_000), ("KiB", 1 << 10), ("KB", 1_000)]
        let exact = units.filter { bytes >= $0.1 && bytes % $0.1 == 0 }
        guard let best = exact.min(by: { bytes / $0.1 < bytes / $1.1 }) else { return String(bytes) }
        return "\(bytes / best.1)\(best.0)"
    }

    /// The grammar of ``size(_:)``, as errors say it.
    public static let sizeForms = "a whole number and a unit: KB, MB, GB (1000s) or KiB, MiB, GiB (1024s), e.g. 64MB or 512MiB"
}
