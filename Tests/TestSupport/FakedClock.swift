import Foundation

/// The calendar stage of Tools/test runs the suites with the wall clock moved years ahead by
/// libfaketime (Tests/Calendar/later). The few checks a faked clock cannot make say so, by name
/// and reason, instead of passing.
public enum FakedClock {
    /// Whether libfaketime moves this process's wall clock (and its children's).
    public static var isActive: Bool {
        ProcessInfo.processInfo.environment["LD_PRELOAD"]?.contains("libfaketime") == true
    }
}
