/** Alerts: fleet conditions that need a person (docs/alerts.md). */
export { AlertService, type AlertCondition, type AlertChange, type AlertObserver } from './alert-service.js';
export { alertsOf, type AlertFilter } from './alert-store.js';
export { FleetAlerts, type FleetAlertsOptions } from './fleet-alerts.js';
export { DEFAULT_ALERT_SETTINGS, type AlertSettings } from './settings.js';
export { faultAlertSeverity, type FaultInput } from './sources/faults.js';
export * from './records.js';
