import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit every suite takes. It only catches a hang: a bound that also judged speed
    /// would fail on a machine loaded twice over (Tests/README.md), so what a test asserts about
    /// time is relative to what it measures, and this limit is far above any run that is merely slow.
    public static var hangGuard: Self { .timeLimit(.minutes(10)) }
}
