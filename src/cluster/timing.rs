//! Kivi's timing and capacity constants (from `config.pml`), in Kivi's time unit of 0.1 s.

/// How long the HPA waits between runs unless the cluster is quiet.
pub const HPA_WAIT_TIME: u16 = 150;
/// Time one HPA iteration takes.
pub const HPA_RUN_TIME: u32 = 1;
/// Time one iteration of the scheduler, kubelet, deployment or node controller takes.
pub const CONTROLLER_RUN_TIME: u32 = 1;
/// How long a CPU change event waits unless the cluster is quiet.
pub const EVENT_CPU_TIME: u16 = 600;
/// How long a node stays down for maintenance unless the cluster settles first.
pub const MAINTENANCE_WAIT_TIME: u16 = 600;
/// The descheduler's period (5 minutes).
pub const DESCHEDULER_WAIT_TIME: u16 = 3000;
/// How many repetitions count as an oscillation (Kivi's `LOOP_TIMES`).
pub const LOOP_TIMES: u8 = 3;
/// Upper bound of a pod's CPU usage (Kivi's `POD_CPU_THRE`).
pub const POD_CPU_MAX: i32 = 64;
/// Most pods a node accepts (Kivi's `NODE_ALLOWED_POD_NUM`).
pub const NODE_ALLOWED_PODS: i32 = 80;
/// The largest score a scheduler plugin gives (Kubernetes' `MaxNodeScore`).
pub const MAX_NODE_SCORE: i32 = 100;
/// HPA tolerance in percent.
pub const HPA_TOLERANCE: i32 = 10;
/// The HPA never scales up to more than this or twice the current replicas.
pub const HPA_SCALE_UP_LIMIT_MIN: i32 = 4;
/// The HPA's scale-up factor.
pub const HPA_SCALE_UP_LIMIT_FACTOR: i32 = 2;
