//! TODO

use super::{Context, RedisCall};
use crate::Report;

pub(crate) fn check(_cx: &Context<'_>, _calls: &[RedisCall], _report: &mut Report) {}
