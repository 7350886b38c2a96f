extension XMPPSession {
    /// What the session connects to and how it behaves.
    public typealias Configuration = XMPPSessionConfiguration<C>
}
