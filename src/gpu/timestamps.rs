//! GPU timestamps around passes.

use super::accel::QueryPool;
use super::commands::Recording;
use super::context::Context;
use super::error::{GpuError, GpuResult, VkContext};
use ash::vk;
use std::sync::Arc;

/// A pool of timestamp queries; write them while recording, read them after the wait.
pub struct Timestamps {
    ctx: Arc<Context>,
    pool: Arc<QueryPool>,
    count: u32,
}

impl Timestamps {
    pub fn new(ctx: &Arc<Context>, count: u32) -> GpuResult<Timestamps> {
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(count);
        Ok(Timestamps {
            ctx: ctx.clone(),
            pool: Arc::new(QueryPool::new(ctx, &info)?),
            count,
        })
    }

    /// Whether the queue records timestamps at all.
    pub fn supported(&self) -> bool {
        self.ctx.limits.timestamps_supported
    }

    /// Resets every query; call before recording a frame that writes them.
    pub fn reset(&self, rec: &mut Recording<'_>) {
        rec.retain(&self.pool);
        // SAFETY: recording; the pool is retained until the fence signals.
        unsafe {
            rec.device()
                .cmd_reset_query_pool(rec.cmd, self.pool.raw, 0, self.count)
        };
    }

    /// Records timestamp `index` once all earlier commands have finished.
    pub fn write(&self, rec: &mut Recording<'_>, index: u32) -> GpuResult<()> {
        if index >= self.count {
            return Err(GpuError::Usage(format!(
                "timestamp {index} out of {}",
                self.count
            )));
        }
        rec.retain(&self.pool);
        // SAFETY: recording; index in range; the pool is retained until the fence signals.
        unsafe {
            rec.device().cmd_write_timestamp(
                rec.cmd,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                self.pool.raw,
                index,
            )
        };
        Ok(())
    }

    /// All timestamps in nanoseconds; waits for them to be written (read them after the
    /// recording's submission has been waited for, or this blocks until it finishes).
    pub fn read_ns(&self) -> GpuResult<Vec<f64>> {
        let mut raw = vec![0u64; self.count as usize];
        // SAFETY: the queries were written by a completed submission.
        unsafe {
            self.ctx.raw().get_query_pool_results(
                self.pool.raw,
                0,
                &mut raw,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .vk("vkGetQueryPoolResults")?;
        let period = self.ctx.limits.timestamp_period_ns as f64;
        Ok(raw.iter().map(|&t| t as f64 * period).collect())
    }
}
