/** The grid gateway's migrations, statically imported (works from `dist/` and bundles). */
import m0001 from "./0001_create_alert_rules.js"
import m0002 from "./0002_create_notification_settings.js"
import m0003 from "./0003_create_alert_deliveries.js"

export const service = "grid-gateway"

export const migrations = {
  "0001_create_alert_rules": m0001,
  "0002_create_notification_settings": m0002,
  "0003_create_alert_deliveries": m0003
}
