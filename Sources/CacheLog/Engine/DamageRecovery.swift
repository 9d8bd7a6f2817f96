#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What an open does with a database whose data file is damaged (``CacheLogError/isDamage``).
public enum DamageRecovery: Sendable, Equatable {
    /// The open throws the damage; the app decides (the default).
    case fail
    /// The open moves the damaged `data.mdb` aside, to `data.mdb.damaged-<UTC time>` beside it
    /// (kept for a bug report), and starts a new database there, whose first record says what
    /// was moved where and why (the retention record's `by`). A cache loses its history, never
    /// its next save. A read-only open never moves anything.
    case moveAside
}

/// Opens an environment, moving a damaged data file aside first when the open asks for it.
struct DamagedDataFile {
    /// The name the damaged file was given, and the damage that moved it.
    let movedTo: String
    let damage: CacheLogError

    /// Opens with `environment`; on damage, moves `path`'s `data.mdb` aside and opens again.
    ///
    /// Recoverers of one database take turns (an exclusive `flock` on the damaged file), and each
    /// opens again before it moves anything: a process that finds a new database where the
    /// damaged one was, because another moved it first, opens that one.
    /// - Returns: the environment, and what was moved aside (nil when nothing was).
    /// - Throws: the damage when the file cannot be moved; what `environment` throws otherwise.
    static func openMovingDamageAside(_ path: String, at now: Date, _ environment: () throws -> Environment) throws -> (Environment, DamagedDataFile?) {
        do {
            return (try environment(), nil)
        } catch let damage as CacheLogError where damage.isDamage {
            let file = path + "/data.mdb"
            let held = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard held >= 0 else { throw damage }
            defer { close(held) }
            guard flock(held, LOCK_EX) == 0 else { throw damage }
            let found: CacheLogError
            do {
                return (try environment(), nil)
            } catch let again as CacheLogError where again.isDamage {
                found = again
            }
            var heldInfo = stat(), namedInfo = stat()
            guard fstat(held, &heldInfo) == 0, lstat(file, &namedInfo) == 0,
                  heldInfo.st_ino == namedInfo.st_ino, heldInfo.st_dev == namedInfo.st_dev else {
                return (try environment(), nil)
            }
            let name = asideName(in: path, at: now)
            guard rename(file, path + "/" + name) == 0 else { throw damage }
            // The lock file describes the damaged file's readers and commits, not a new one's.
            unlink(path + "/lock.mdb")
            return (try environment(), DamagedDataFile(movedTo: name, damage: found))
        }
    }

    /// `data.mdb.damaged-20261207T141828Z`, or with `-2`, `-3`, … when that name is taken.
    private static func asideName(in path: String, at now: Date) -> String {
        var time = tm()
        // The app's clock names the file; one that says no real time names it by 1970.
        var seconds = time_t(exactly: now.timeIntervalSince1970.rounded(.down)) ?? 0
        gmtime_r(&seconds, &time)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let date = "\(Int(time.tm_year) + 1900)\(two(time.tm_mon + 1))\(two(time.tm_mday))"
        let stamp = "\(date)T\(two(time.tm_hour))\(two(time.tm_min))\(two(time.tm_sec))Z"
        var name = "data.mdb.damaged-\(stamp)"
        var info = stat()
        var suffix = 2
        while lstat(path + "/" + name, &info) == 0 {
            name = "data.mdb.damaged-\(stamp)-\(suffix)"
            suffix += 1
        }
        return name
    }

    /// Who the new database's first record says set it up, and why it is new.
    func recordedBy(_ by: String) -> String {
        "\(by), after moving the damaged data file aside to \(movedTo): \(damage.damageSummary)"
    }
}
