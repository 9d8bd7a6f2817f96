#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment variables, read one at a time with `getenv`.
///
/// `ProcessInfo.processInfo.environment` copies the whole environment into a dictionary at each
/// call; at every start the tool asks for a few variables (CACHELOG_DB, CACHELOG_NOW, HOME,
/// NO_COLOR, TERM), which `callgrind` of `cachelog state` counted as 3 % of its instructions.
enum EnvironmentVariables {
    /// The value of `name`, or nil when it is not set.
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
