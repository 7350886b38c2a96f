/// A connection whose XML parser and TLS buffers an ``IdleTrimSweep`` may trim (issue 43).
protocol IdleTrimMember: AnyObject {
    /// At a tick: trims the parser (and the TLS buffers) if nothing was read since
    /// generation `quietSince` began (``XMLStreamParser/trim()``); true when the connection
    /// is done with the sweep: trimmed, gone, or never to be trimmed.
    func trimForSweep(quietSince: Int) -> Bool
}
