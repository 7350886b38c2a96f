/// Webhook bodies shaped as Alertmanager (prometheus.io, "webhook_config", version 4) and
/// Grafana (grafana.com, "Webhook notifier") document them, for the HTTP ingress tests
/// and benchmarks.
public enum WebhookSamples {
    /// Two alerts of one group, firing.
    public static let alertmanagerFiring = """
        {
          "version": "4",
          "groupKey": "{}:{alertname=\\"InstanceDown\\"}",
          "truncatedAlerts": 0,
          "status": "firing",
          "receiver": "xmpp",
          "groupLabels": {"alertname": "InstanceDown"},
          "commonLabels": {"alertname": "InstanceDown", "job": "node", "severity": "page"},
          "commonAnnotations": {},
          "externalURL": "http://alertmanager.example:9093",
          "alerts": [
            {
              "status": "firing",
              "labels": {"alertname": "InstanceDown", "instance": "db1:9100", "job": "node", "severity": "page"},
              "annotations": {"summary": "db1:9100 has been down for more than 5 minutes"},
              "startsAt": "2026-11-24T05:00:00Z",
              "endsAt": "0001-01-01T00:00:00Z",
              "generatorURL": "http://prometheus.example:9090/graph?g0.expr=up+%3D%3D+0",
              "fingerprint": "a1b2c3d4e5f60718"
            },
            {
              "status": "firing",
              "labels": {"alertname": "InstanceDown", "instance": "web2:9100", "job": "node", "severity": "page"},
              "annotations": {"summary": "web2:9100 has been down for more than 5 minutes"},
              "startsAt": "2026-11-24T05:01:00Z",
              "endsAt": "0001-01-01T00:00:00Z",
              "generatorURL": "http://prometheus.example:9090/graph?g0.expr=up+%3D%3D+0",
              "fingerprint": "0718a1b2c3d4e5f6"
            }
          ]
        }
        """

    /// One alert, resolved.
    public static let alertmanagerResolved = """
        {
          "version": "4",
          "groupKey": "{}:{alertname=\\"DiskFull\\"}",
          "truncatedAlerts": 0,
          "status": "resolved",
          "receiver": "xmpp",
          "groupLabels": {"alertname": "DiskFull"},
          "commonLabels": {"alertname": "DiskFull", "instance": "db1:9100", "severity": "warning"},
          "commonAnnotations": {"summary": "Disk on db1 over 90%"},
          "externalURL": "http://alertmanager.example:9093",
          "alerts": [
            {
              "status": "resolved",
              "labels": {"alertname": "DiskFull", "instance": "db1:9100", "severity": "warning"},
              "annotations": {"summary": "Disk on db1 over 90%"},
              "startsAt": "2026-11-24T04:00:00Z",
              "endsAt": "2026-11-24T04:30:00Z",
              "generatorURL": "http://prometheus.example:9090/graph?g0.expr=disk",
              "fingerprint": "ffee000011112222"
            }
          ]
        }
        """

    /// Grafana's unified alerting webhook: the Alertmanager shape plus `title`, `state`,
    /// `message`, and per alert `silenceURL`, `dashboardURL`, `panelURL`, `values`.
    public static let grafanaFiring = """
        {
          "receiver": "xmpp-bridge",
          "status": "firing",
          "orgId": 1,
          "alerts": [
            {
              "status": "firing",
              "labels": {"alertname": "High memory usage", "team": "blue", "zone": "us-1"},
              "annotations": {
                "description": "The system has high memory usage",
                "runbook_url": "https://myrunbook.example/runbook/1234",
                "summary": "This alert was triggered for zone us-1"
              },
              "startsAt": "2026-11-24T05:51:03.157076+02:00",
              "endsAt": "0001-01-01T00:00:00Z",
              "generatorURL": "https://grafana.example/alerting/1afz29v7z/edit",
              "fingerprint": "c6eadffa33fcdf37",
              "silenceURL": "https://grafana.example/alerting/silence/new?alertmanager=grafana&matchers=alertname%3DT2",
              "dashboardURL": "",
              "panelURL": "",
              "values": {"B": 44.23943737541908, "C": 1},
              "valueString": "[ var='B' labels={__name__=go_memstats_heap_inuse_bytes} value=44.23943737541908 ], [ var='C' value=1 ]"
            }
          ],
          "groupLabels": {},
          "commonLabels": {"team": "blue"},
          "commonAnnotations": {},
          "externalURL": "https://grafana.example/",
          "version": "1",
          "groupKey": "{}:{}",
          "truncatedAlerts": 0,
          "title": "[FIRING:1]  (blue)",
          "state": "alerting",
          "message": "**Firing**\\n\\nValue: B=44.23943737541908, C=1\\nLabels:\\n - alertname = High memory usage\\n"
        }
        """
}
