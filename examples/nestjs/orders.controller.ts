import { BadRequestException, Body, Controller, Inject, Post } from '@nestjs/common';
import { OrdersService } from './orders.service.js';

@Controller('orders')
export class OrdersController {
  constructor(@Inject(OrdersService) private readonly orders: OrdersService) {}

  @Post()
  async create(@Body() body: { total?: unknown }): Promise<{ id: string }> {
    if (!Number.isInteger(body?.total)) throw new BadRequestException('total must be an integer');
    return this.orders.place(body.total as number);
  }
}
