import Foundation
import HTTPIngress
import TOMLKit
import TransportCore

extension ConfigurationLoader {
    /// Largest HTTP request body an ingress may allow: 16 MiB.
    package static let maximumBodyBytes = 16 * 1024 * 1024

    /// The keys of an http local: where it listens, its token source, its limits.
    ///
    /// A listener without a token must be reachable only from this machine (loopback or a
    /// Unix socket): anyone who can reach it could post into its channels.
    package mutating func httpSettings(_ table: TOMLTable, at path: String, name: String, claimedPaths: inout [String: String]) -> HTTPLocalSettings? {
        let listenHint = "listen = \"127.0.0.1:8080\", \"[::1]:8080\" or a Unix socket path such as \"/run/xmpp-bridge/\(name).sock\""
        guard let text = self.nonEmptyString(table, "listen", path, hint: listenHint) else {
            if table["listen"] == nil { self.problem("\(path).listen", "is missing", "an http local needs an address: \(listenHint)") }
            return nil
        }
        guard var listen = HTTPListenAddress(text) else {
            self.problem("\(path).listen", "'\(text)' is neither host:port nor a socket path", listenHint)
            return nil
        }
        if case .unixSocket(let socket) = listen {
            let resolved = self.resolve(socket)
            if let owner = claimedPaths[resolved] {
                self.problem("\(path).listen", "\(resolved) is already used by \(owner)", "each socket needs its own path")
            } else {
                claimedPaths[resolved] = "\(path).listen"
            }
            self.checkSocketPath(resolved, at: "\(path).listen")
            listen = .unixSocket(resolved)
        }
        var settings = HTTPLocalSettings(listen: listen)
        let file = self.string(table, "token_file", path).map { self.resolve($0) }
        let environment = self.string(table, "token_env", path)
        switch (file, environment) {
        case (let file?, nil):
            if !FileManager.default.isReadableFile(atPath: file) {
                self.problem("\(path).token_file", "cannot read \(file)", "create it with the token (e.g. openssl rand -hex 32 > \(file); chmod 600 \(file))")
            }
            settings.token = .file(file)
        case (nil, let variable?):
            settings.token = .environment(variable)
        case (.some, .some):
            self.problem(path, "has two token sources", "set one of token_file, token_env")
        case (nil, nil):
            if !listen.isLocalOnly {
                self.problem(
                    "\(path).listen", "\(listen) is reachable from other machines, and no token is set",
                    "set token_file or token_env, or listen on 127.0.0.1, ::1 or a Unix socket"
                )
            }
        }
        if let bytes = self.integer(table, "max_body_bytes", path, in: 1...Self.maximumBodyBytes, hint: "the largest request body in bytes, e.g. 1048576") {
            settings.maxBodyBytes = bytes
        }
        if let wait = self.age(table, "wait_timeout", path) {
            if wait == .zero || wait > .seconds(3600) {
                self.problem("\(path).wait_timeout", "must be from 1s to 1h", "how long ?wait=sent may hold a request, e.g. \"30s\"")
            } else {
                settings.waitTimeout = wait
            }
        }
        if let count = self.integer(table, "max_connections", path, in: 1...65_536, hint: "connections served at once, e.g. 256") {
            settings.maxConnections = count
        }
        if let idle = self.age(table, "idle_timeout", path) {
            if idle == .zero || idle > .seconds(3600) {
                self.problem("\(path).idle_timeout", "must be from 1s to 1h", "how long an idle connection is kept, e.g. \"30s\"")
            } else {
                settings.idleTimeout = idle
            }
        }
        return settings
    }

    /// `[bridge] metrics_listen`: where `/metrics` and `/health/*` are served (off when unset).
    package mutating func metricsListen(_ table: TOMLTable, at path: String) -> HTTPListenAddress? {
        let hint = "metrics_listen = \"127.0.0.1:9464\" (or a Unix socket path)"
        guard let text = self.nonEmptyString(table, "metrics_listen", path, hint: hint) else { return nil }
        guard var listen = HTTPListenAddress(text) else {
            self.problem("\(path).metrics_listen", "'\(text)' is neither host:port nor a socket path", hint)
            return nil
        }
        if case .unixSocket(let socket) = listen {
            listen = .unixSocket(self.resolve(socket))
            self.checkSocketPath(self.resolve(socket), at: "\(path).metrics_listen")
        }
        return listen
    }

    /// `[channels.NAME] template_file`: a Mustache template for webhooks into the channel,
    /// read and parsed now so a broken one is reported by `check`, not at the first alert.
    package mutating func webhookTemplate(_ table: TOMLTable, at path: String) -> String? {
        guard let file = self.nonEmptyString(table, "template_file", path, hint: "a Mustache template file, e.g. template_file = \"alerts.mustache\"") else {
            return nil
        }
        let resolved = self.resolve(file)
        guard let data = FileManager.default.contents(atPath: resolved), let text = String(validating: [UInt8](data), as: UTF8.self) else {
            self.problem("\(path).template_file", "cannot read \(resolved) as UTF-8 text", "create the template, or remove template_file for the default")
            return nil
        }
        do {
            _ = try WebhookTemplate(text)
        } catch {
            self.problem("\(path).template_file", "\(resolved): \(error)", "fix the template; see docs/notifications-and-paging.md, \"HTTP ingress\"")
            return nil
        }
        return text
    }
}
